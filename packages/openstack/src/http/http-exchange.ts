import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** One HTTP request as the transport sends it: JSON text in, the whole answer's text out. */
export interface Exchange {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  /** The body's text, or undefined for none. */
  readonly body?: string;
  /** Ends the exchange (a timeout, a caller's deadline): it then rejects with the signal's reason. */
  readonly signal: AbortSignal;
}

/** The answer: its status, its headers, and the whole body as text. */
export interface ExchangeAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

// Connections are kept open between calls (as fetch's do); certificate authorities are Node's, with
// NODE_EXTRA_CA_CERTS (clouds-yaml.ts).
const AGENTS = {
  http: new HttpAgent({ keepAlive: true }),
  https: new HttpsAgent({ keepAlive: true }),
};

/**
 * Sends one request with node:http or node:https and reads the whole answer. The workers make several
 * calls per instance they evacuate: this costs a fraction of the CPU of the global fetch, which builds
 * web streams, a Request and a Response around every call. A connection that fails before or during
 * the answer rejects with Node's error (its `code`: ECONNREFUSED, ECONNRESET, ...), an aborted signal
 * with the signal's reason (a TimeoutError for AbortSignal.timeout).
 */
export function exchange(request: Exchange): Promise<ExchangeAnswer> {
  const url = new URL(request.url);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string | number> = { ...request.headers };
  if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
  return new Promise((resolve, reject) => {
    const { signal } = request;
    const fail = (error: unknown) => reject(signal.aborted ? signal.reason : error);
    if (signal.aborted) {
      fail(signal.reason);
      return;
    }
    const outgoing = (secure ? httpsRequest : httpRequest)(
      url,
      { method: request.method, headers, agent: secure ? AGENTS.https : AGENTS.http, signal },
      (incoming) => {
        let text = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => {
          text += chunk;
        });
        incoming.on('error', fail);
        incoming.on('end', () => {
          // An answer cut short ends without error on some paths: Node marks it incomplete.
          if (!incoming.complete) fail(Object.assign(new Error('answer cut short'), { code: 'ECONNRESET' }));
          else resolve({ status: incoming.statusCode ?? 0, headers: toHeaders(incoming.headers), text });
        });
      },
    );
    outgoing.on('error', fail);
    outgoing.end(request.body);
  });
}

/** Node's header record as a Headers object (a repeated header joined with `, `). */
function toHeaders(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}
