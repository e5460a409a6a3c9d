import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the proxy received, and what it did with it. */
export interface ProxiedRequest {
  /** Milliseconds since the epoch, when the request arrived. */
  readonly at: number;
  /** The route's name (`compute`, `identity`). */
  readonly service: string;
  readonly method: string;
  /** The path below the route's prefix, with the query: `/os-services?binary=nova-compute`. */
  readonly path: string;
  /** The request's `X-Auth-Token`, or null. */
  readonly token: string | null;
  /** The status the client got. */
  status: number;
  /** Whether the request reached the service (false: the proxy answered in its place). */
  forwarded: boolean;
  /** The fault applied, or null when the request went through untouched. */
  fault: FaultAction['kind'] | null;
}

/** What the proxy does with one request instead of passing it through untouched. */
export type FaultAction =
  /** Waits this many milliseconds, then forwards the request and returns the service's answer. */
  | { readonly kind: 'delay'; readonly milliseconds: number }
  /** Answers in the service's place; the request never reaches it. */
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body: string;
    }
  /** Forwards the request (its effect happens) but replaces the answer: a lost reply. */
  | {
      readonly kind: 'replace';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body: string;
    }
  /** Forwards the request and returns the service's status and headers with the body cut in half. */
  | { readonly kind: 'truncate' };

/** Decides the fault for a request (null: pass it through). Called once per request. */
export type FaultRule = (request: ProxiedRequest) => FaultAction | null;

/** Hop-by-hop and length headers that the proxy sets itself. */
const DROPPED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'host',
]);

/**
 * A fault-injecting HTTP proxy (node:http) between lifeguard and OpenStack services: each route
 * prefix (`/compute`, `/identity`) forwards to a service's base URL, and the current FaultRule may
 * delay a request, answer in the service's place (500, 503 with Retry-After, an HTML error page, a
 * 401), forward it and replace the answer (the effect happened, the reply was lost) or truncate the
 * body. Every request is recorded with what was done to it, so tests count from what really passed.
 */
export class OpenStackFaultProxy {
  readonly requests: ProxiedRequest[] = [];
  private rule: FaultRule = () => null;

  private constructor(
    private readonly server: Server,
    /** The proxy's base URL, `http://127.0.0.1:<port>`. */
    readonly url: string,
  ) {}

  /**
   * Starts the proxy on a free loopback port. `routes` maps a prefix without slashes (`compute`) to
   * the base URL its requests are forwarded to (`http://127.0.0.1:8775/v2.1`).
   */
  static async start(routes: Readonly<Record<string, string>>): Promise<OpenStackFaultProxy> {
    let proxy: OpenStackFaultProxy | null = null;
    const server = createServer((request, response) => {
      proxy!.handle(routes, request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(599, { 'content-type': 'text/plain' });
        response.end(`proxy error: ${(error as Error).message}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    proxy = new OpenStackFaultProxy(server, `http://127.0.0.1:${port}`);
    return proxy;
  }

  /** Replaces the fault rule; `null` lets every request through untouched. */
  inject(rule: FaultRule | null): void {
    this.rule = rule ?? (() => null);
  }

  /** The requests received at or after `since` (milliseconds since the epoch). */
  since(since: number): ProxiedRequest[] {
    return this.requests.filter((request) => request.at >= since);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(
    routes: Readonly<Record<string, string>>,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const url = request.url ?? '/';
    const match = /^\/([^/?]+)(.*)$/.exec(url);
    const target = match ? routes[match[1]!] : undefined;
    if (!match || target === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end(`no route for ${url}`);
      return;
    }
    const body = await readBody(request);
    const token = request.headers['x-auth-token'];
    const record: ProxiedRequest = {
      at: Date.now(),
      service: match[1]!,
      method: request.method ?? 'GET',
      path: match[2] || '',
      token: typeof token === 'string' ? token : null,
      status: 0,
      forwarded: false,
      fault: null,
    };
    this.requests.push(record);
    const action = this.rule(record);
    record.fault = action?.kind ?? null;
    if (action?.kind === 'answer') {
      send(response, record, action.status, action.headers ?? {}, action.body);
      return;
    }
    if (action?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, action.milliseconds));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (!DROPPED_HEADERS.has(name) && typeof value === 'string') headers[name] = value;
    }
    const answer = await fetch(`${target}${record.path}`, {
      method: record.method,
      headers,
      ...(body.length > 0 ? { body: Uint8Array.from(body) } : {}),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await answer.text();
    record.forwarded = true;
    if (action?.kind === 'replace') {
      send(response, record, action.status, action.headers ?? {}, action.body);
      return;
    }
    const passed: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!DROPPED_HEADERS.has(name)) passed[name] = value;
    });
    const returned = action?.kind === 'truncate' ? text.slice(0, Math.floor(text.length / 2)) : text;
    send(response, record, answer.status, passed, returned);
  }
}

function send(
  response: ServerResponse,
  record: ProxiedRequest,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
): void {
  record.status = status;
  response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  response.end(body);
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Nova's JSON fault body for a status (`{"computeFault": {"code": 500, "message": ...}}`). */
export function novaFault(status: number, message: string): string {
  const name = status === 503 ? 'serviceUnavailable' : status === 401 ? 'unauthorized' : 'computeFault';
  return JSON.stringify({ [name]: { code: status, message } });
}

/** An HTML error page as a load balancer or a web server in front of Nova sends it. */
export function htmlErrorPage(status: number, reason: string): string {
  return `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}
