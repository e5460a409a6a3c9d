import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TlsSettings } from '../configuration/fence-methods.ts';

export interface JsonRequest {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  /** HTTP basic authentication; sent only in the Authorization header, never logged. */
  basicAuth?: { user: string; password: string };
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** TLS settings for https URLs. */
  tls?: TlsSettings;
  /** Abort the request (connect, send, answer) after this many milliseconds. */
  timeoutMilliseconds: number;
}

export interface JsonResponse {
  status: number;
  /** The parsed JSON body, or null when the body is empty or not JSON. */
  body: unknown;
}

/** The request never got an HTTP answer: connection refused, reset, TLS failure, or the timeout. */
export class HttpTransportError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
    /** Node's error code (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, ...), or null. */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'HttpTransportError';
  }

  /** The server's certificate is not trusted or does not name the address: a configuration problem. */
  get untrustedCertificate(): boolean {
    return this.code !== null && TLS_TRUST_CODES.has(this.code);
  }
}

/** Node's codes for a certificate that is not trusted or does not match the address. */
const TLS_TRUST_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
]);

/**
 * One JSON request over a fresh connection (no keep-alive pool: a BMC may drop idle connections),
 * with an overall deadline. Non-2xx answers resolve normally; the caller reads `status`.
 * This is node:http(s), not the `fetch` the OpenStack client uses: each BMC has TLS settings of its
 * own (a CA bundle, a client certificate, or `ssl_verify: false` for a self-signed BMC,
 * docs/fencing-worker.md#how-each-method-fences), which node:https takes per request, while Node's
 * `fetch` takes them only through an undici dispatcher and so another dependency.
 * @throws HttpTransportError without an HTTP answer (its message names the URL, never the credentials)
 */
export function requestJson(options: JsonRequest): Promise<JsonResponse> {
  const url = new URL(options.url);
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.from(JSON.stringify(options.body));
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  if (options.basicAuth) {
    const token = Buffer.from(`${options.basicAuth.user}:${options.basicAuth.password}`).toString('base64');
    headers.authorization = `Basic ${token}`;
  }
  const where = `${options.method} ${url.origin}${url.pathname}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (error: HttpTransportError | null, response?: JsonResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(response!);
    };
    const onResponse = (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => finish(new HttpTransportError(`${where}: ${error.message}`, false)));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = null;
        try {
          body = text.trim() ? JSON.parse(text) : null;
        } catch {
          body = null;
        }
        finish(null, { status: response.statusCode ?? 0, body });
      });
    };
    let tlsOptions = {};
    if (url.protocol === 'https:') {
      const tls = options.tls;
      try {
        tlsOptions = {
          rejectUnauthorized: tls?.verify ?? true,
          ...(tls?.caBundlePath ? { ca: readFileSync(tls.caBundlePath) } : {}),
          ...(tls?.certificatePath ? { cert: readFileSync(tls.certificatePath) } : {}),
          ...(tls?.keyPath ? { key: readFileSync(tls.keyPath) } : {}),
        };
      } catch (error) {
        finish(new HttpTransportError(`${where}: cannot read TLS files: ${(error as Error).message}`, false));
        return;
      }
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: options.method, headers, agent: false, ...tlsOptions }, onResponse);
    timer = setTimeout(() => {
      request.destroy();
      finish(new HttpTransportError(`${where}: no answer within ${options.timeoutMilliseconds} ms`, true));
    }, options.timeoutMilliseconds);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(new HttpTransportError(`${where}: ${error.message}`, false, error.code ?? null)),
    );
    request.end(payload);
  });
}
