import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenProblem, standardOutput } from '@lifeguard/contracts';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { HeartbeatSender } from './heartbeat-sender.ts';
import type { ProcessEntry } from './process-states.ts';
import { HostAgentConfigError, type HostAgentSettings } from './settings.ts';

/** How many intervals may pass without a round of heartbeats before /healthz answers 503. */
const HEALTHY_WITHIN_INTERVALS = 3;

/** A running host agent: its sender and its health/metrics server. */
export interface HostAgent {
  readonly sender: HeartbeatSender;
  /** The port /healthz and /metrics answer on, or null when LIFEGUARD_HTTP_PORT is 0. */
  readonly httpPort: number | null;
  stop(): Promise<void>;
}

/** The agent's logger: JSON lines on standard output, the key file's path logged, never the key. */
export function createHostAgentLogger(settings: Pick<HostAgentSettings, 'host' | 'logLevel'>): Logger {
  return pino(
    {
      level: settings.logLevel,
      base: { service: 'host-agent', host: settings.host },
      redact: { paths: ['key', '*.key', 'settings.key'], censor: '[REDACTED]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    standardOutput(),
  );
}

/**
 * Starts the agent: the heartbeats at once, then every interval, and the health/metrics server.
 * `/healthz` answers 200 while heartbeats went out within the last three intervals and at least one
 * reached the network (a monitor resolved and was routable), 503 otherwise.
 * @throws HostAgentConfigError when a network's source address is not this host's, or the health
 *   server cannot listen (LIFEGUARD_HTTP_PORT taken, LIFEGUARD_HTTP_HOST not this host's)
 */
export async function startHostAgent(
  settings: HostAgentSettings,
  logger: Logger,
  listProcesses?: () => ProcessEntry[],
): Promise<HostAgent> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'lifeguard_host_agent_' });
  const sender = new HeartbeatSender({
    settings,
    logger,
    registry,
    ...(listProcesses ? { listProcesses } : {}),
  });
  // The health port first: an agent that cannot take it exits (78) before it sends any heartbeat,
  // rather than after one that the monitors would count as the host alive.
  const server: Server | null = settings.http.port === 0 ? null : await serve(settings, sender, registry);
  try {
    await sender.start();
  } catch (error) {
    await sender.stop();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  logger.info(
    {
      networks: settings.networks.map((each) => ({
        name: each.name,
        from: each.sourceAddress,
        monitors: each.monitors.map((monitor) => `${monitor.host}:${monitor.port}`),
      })),
      intervalSeconds: settings.intervalSeconds,
      watchedProcesses: settings.watchedProcesses,
      http: server ? (server.address() as AddressInfo).port : null,
    },
    'host agent started',
  );
  return {
    sender,
    httpPort: server ? (server.address() as AddressInfo).port : null,
    async stop() {
      await sender.stop();
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      server?.closeAllConnections();
      logger.info('host agent stopped');
    },
  };
}

async function serve(
  settings: HostAgentSettings,
  sender: HeartbeatSender,
  registry: Registry,
): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url === '/metrics') {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: Error) => response.writeHead(500).end(error.message),
      );
      return;
    }
    if (request.url === '/healthz' || request.url === '/readyz') {
      const window = HEALTHY_WITHIN_INTERVALS * settings.intervalSeconds * 1000;
      const within = (at: Date | null) => at !== null && Date.now() - at.getTime() <= window;
      const status = !within(sender.lastRoundAt)
        ? 'heartbeats late'
        : !within(sender.lastSentAt)
          ? 'heartbeats not sent: no monitor resolves or is routable'
          : 'ok';
      response.writeHead(status === 'ok' ? 200 : 503, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          status,
          lastHeartbeatAt: sender.lastRoundAt?.toISOString() ?? null,
          lastSentAt: sender.lastSentAt?.toISOString() ?? null,
        }),
      );
      return;
    }
    response.writeHead(404).end();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.http.port, settings.http.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    // Any other error (a host name that does not resolve, say) is the host setting's too.
    const found = listenProblem(error) ?? {
      code: (error as NodeJS.ErrnoException).code ?? 'error',
      setting: 'host' as const,
      problem: (error as Error).message,
    };
    const key = found.setting === 'port' ? 'LIFEGUARD_HTTP_PORT' : 'LIFEGUARD_HTTP_HOST';
    throw new HostAgentConfigError([
      {
        key,
        problem: `cannot serve /healthz and /metrics on ${settings.http.host}:${settings.http.port} (${found.code}): ${found.problem}${key === 'LIFEGUARD_HTTP_PORT' ? ' (LIFEGUARD_HTTP_PORT=0 runs without them)' : ''}`,
      },
    ]);
  }
  return server;
}
