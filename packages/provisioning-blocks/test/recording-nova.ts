import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenStackClients, type NovaClient } from '@lifeguard/openstack';

/** One `POST /os-server-external-events` the recording endpoint received. */
export interface RecordedRequest {
  readonly events: Array<{ name: string; server_uuid: string; status?: string; tag?: string }>;
  readonly token: string | undefined;
  readonly at: number;
}

/** How the endpoint answers one request: HTTP status and the per-event codes (default all 200). */
export type Answer = (request: RecordedRequest) => { status: number; codes?: number[] };

/**
 * A minimal HTTP endpoint that records `POST /os-server-external-events` requests and answers as
 * Nova does (200, 207 with per-event codes, 404, or any error status) — for the fault cases real
 * Nova cannot be made to produce. Answers are taken from `answers` in order; when none is left, 200.
 */
export class RecordingNova {
  readonly requests: RecordedRequest[] = [];
  readonly answers: Answer[] = [];
  private server: Server | null = null;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        if (request.method !== 'POST' || request.url !== '/v2.1/os-server-external-events') {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ itemNotFound: { code: 404, message: 'not found' } }));
          return;
        }
        const recorded: RecordedRequest = {
          events: (JSON.parse(body) as { events: RecordedRequest['events'] }).events,
          token: request.headers['x-auth-token'] as string | undefined,
          at: Date.now(),
        };
        this.requests.push(recorded);
        const answer = (this.answers.shift() ?? ((): ReturnType<Answer> => ({ status: 200 })))(recorded);
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        if (answer.status === 200 || answer.status === 207) {
          const events = recorded.events.map((event, index) => {
            const code = answer.codes?.[index] ?? 200;
            return { ...event, status: code === 200 ? (event.status ?? 'completed') : 'failed', code };
          });
          response.end(JSON.stringify({ events }));
        } else {
          response.end(
            JSON.stringify({ computeFault: { code: answer.status, message: `HTTP ${answer.status}` } }),
          );
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v2.1`;
  }

  /** Every event received, in order. */
  get events(): RecordedRequest['events'] {
    return this.requests.flatMap((request) => request.events);
  }

  /** A NovaClient pointed at this endpoint with a static token, without retries of its own. */
  client(url: string): NovaClient {
    return createOpenStackClients({
      env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'recording-token', OS_ENDPOINT: url },
      searchDirectories: [],
      retry: { attempts: 1 },
      microversion: '2.53',
    }).compute;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
