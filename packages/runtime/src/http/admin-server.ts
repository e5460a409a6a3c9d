import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { listenErrorAsConfigError } from './listen-error.ts';

/** A named check: resolves true when healthy. It is given at most `timeoutMilliseconds` (default 2000). */
export interface HealthCheck {
  name: string;
  check: () => boolean | Promise<boolean>;
  timeoutMilliseconds?: number;
}

export interface AdminServerOptions {
  host: string;
  /** 0 picks a free port (read `port` after start). */
  port: number;
  /** The setting the port came from, named when it cannot be listened on (default LIFEGUARD_HTTP_PORT). */
  portKey?: string;
  registry: Registry;
  logger: Logger;
  /** `/healthz` (liveness) fails when any of these fails: the process is wedged and should restart. */
  liveness?: ReadonlyArray<HealthCheck>;
  /** `/readyz` (readiness) fails when any of these fails: brokers down, loop not healthy yet. */
  readiness?: ReadonlyArray<HealthCheck>;
  /** Extra Prometheus text appended to `/metrics` (e.g. BullMQ's `exportPrometheusMetrics`). */
  extraMetrics?: ReadonlyArray<() => Promise<string>>;
  /**
   * When true, `/readyz` answers 503 (check `startup: in progress`) until `markStarted()`. A worker adds
   * its own readiness checks after the server listens; without the gate, a probe in between sees only
   * the broker checks and reports ready too early.
   */
  startupGate?: boolean;
}

async function runChecks(
  checks: ReadonlyArray<HealthCheck>,
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const results: Record<string, string> = {};
  let ok = true;
  await Promise.all(
    checks.map(async ({ name, check, timeoutMilliseconds }) => {
      try {
        const passed = await Promise.race([
          Promise.resolve(check()),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMilliseconds ?? 2000)),
        ]);
        results[name] = passed ? 'ok' : 'failing';
        if (!passed) ok = false;
      } catch (error) {
        results[name] = `error: ${(error as Error).message}`;
        ok = false;
      }
    }),
  );
  return { ok, checks: results };
}

/**
 * The small HTTP server every worker runs: `GET /healthz` (liveness), `GET /readyz` (readiness),
 * `GET /metrics` (Prometheus text). Health answers are JSON `{status, checks}` with 200 or 503.
 * Readiness also fails while the process is shutting down (`markShuttingDown`).
 */
export class AdminServer {
  private server: Server | null = null;
  private shuttingDown = false;
  private started: boolean;
  private readonly liveness: HealthCheck[];
  private readonly readiness: HealthCheck[];
  private readonly extraMetrics: Array<() => Promise<string>>;

  constructor(private readonly options: AdminServerOptions) {
    this.liveness = [...(options.liveness ?? [])];
    this.readiness = [...(options.readiness ?? [])];
    this.extraMetrics = [...(options.extraMetrics ?? [])];
    this.started = options.startupGate !== true;
  }

  /** Adds a liveness check (`/healthz`). */
  addLiveness(check: HealthCheck): this {
    this.liveness.push(check);
    return this;
  }

  /** Adds a readiness check (`/readyz`). */
  addReadiness(check: HealthCheck): this {
    this.readiness.push(check);
    return this;
  }

  /** Appends Prometheus text from `source` to `/metrics`. */
  addMetricsText(source: () => Promise<string>): this {
    this.extraMetrics.push(source);
    return this;
  }

  /** The bound port (after start). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Start-up is complete: with `startupGate`, `/readyz` now reports the checks' result. */
  markStarted(): void {
    this.started = true;
  }

  /** From now on `/readyz` answers 503 so load balancers stop sending work. */
  markShuttingDown(): void {
    this.shuttingDown = true;
  }

  /**
   * Starts listening.
   * @throws ConfigError naming `portKey` when the port is taken or not permitted, LIFEGUARD_HTTP_HOST when the host is not an address of this machine or does not resolve; other listen errors as they are
   */
  async start(): Promise<void> {
    const { registry, logger } = this.options;
    this.server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      const reply = (status: number, body: string, type = 'application/json') => {
        response.writeHead(status, { 'content-type': type });
        response.end(body);
      };
      const answer = async () => {
        if (request.method !== 'GET') return reply(405, JSON.stringify({ error: 'method not allowed' }));
        if (path === '/healthz') {
          const result = await runChecks(this.liveness);
          return reply(
            result.ok ? 200 : 503,
            JSON.stringify({ status: result.ok ? 'ok' : 'failing', ...result }),
          );
        }
        if (path === '/readyz') {
          const result = await runChecks(this.readiness);
          const ok = result.ok && this.started && !this.shuttingDown;
          if (!this.started) result.checks.startup = 'in progress';
          if (this.shuttingDown) result.checks.shutdown = 'in progress';
          return reply(ok ? 200 : 503, JSON.stringify({ status: ok ? 'ready' : 'not ready', ...result }));
        }
        if (path === '/metrics') {
          const parts = [await registry.metrics()];
          for (const extra of this.extraMetrics) {
            parts.push(await extra().catch((error: Error) => `# extra metrics failed: ${error.message}\n`));
          }
          return reply(200, parts.join('\n'), registry.contentType);
        }
        return reply(404, JSON.stringify({ error: 'not found', paths: ['/healthz', '/readyz', '/metrics'] }));
      };
      answer().catch((error: unknown) => {
        logger.error({ err: error, path }, 'admin request failed');
        if (!response.headersSent) reply(500, JSON.stringify({ error: 'internal error' }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', (error) =>
        reject(
          listenErrorAsConfigError(
            error,
            { port: this.options.portKey ?? 'LIFEGUARD_HTTP_PORT', host: 'LIFEGUARD_HTTP_HOST' },
            this.options.host,
            this.options.port,
          ),
        ),
      );
      this.server!.listen(this.options.port, this.options.host, () => resolve());
    });
    logger.info({ host: this.options.host, port: this.port }, 'health and metrics server listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
