import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer: status, headers and body text. */
export interface ScriptedAnswer {
  status: number;
  /** Answer only after this long (milliseconds). */
  delayMilliseconds?: number;
  body?: string;
  headers?: Record<string, string>;
}

/**
 * A real HTTP server on 127.0.0.1 that answers each request with the next function of a script, for
 * the answers no healthy service gives on demand (HTML 500 pages, 503 storms, bodies of the wrong
 * shape). Records every request.
 */
export class ScriptedServer {
  readonly requests: Array<{
    method: string;
    url: string;
    headers: IncomingMessage['headers'];
    body: string;
  }> = [];
  private server: Server | null = null;

  constructor(
    private readonly answer: (
      request: { method: string; url: string; body: string },
      index: number,
    ) => ScriptedAnswer,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const entry = {
          method: request.method ?? 'GET',
          url: request.url ?? '/',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(entry);
        const answer = this.answer(entry, this.requests.length - 1);
        const send = () => {
          if (response.destroyed) return;
          response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          response.end(answer.body ?? '');
        };
        if (answer.delayMilliseconds) setTimeout(send, answer.delayMilliseconds);
        else send();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** Nova's version document with the given maximum microversion. */
export function versionDocument(maximum = '2.93'): ScriptedAnswer {
  return {
    status: 200,
    body: JSON.stringify({
      version: { id: 'v2.1', status: 'CURRENT', version: maximum, min_version: '2.1' },
    }),
  };
}

/** A free loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
