import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { HeartbeatSender } from './heartbeat-sender.ts';
import type { ProcessEntry } from './process-states.ts';
import type { HostAgentSettings } from './settings.ts';

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
  return pino({
    level: settings.logLevel,
    base: { service: 'host-agent', host: settings.host },
    redact: { paths: ['key', '*.key', 'settings.key'], censor: '[REDACTED]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/**
 * Starts the agent: the heartbeats at once, then every interval, and the health/metrics server.
 * `/healthz` answers 200 while heartbeats went out within the last three intervals, 503 otherwise.
 * @throws HostAgentConfigError when a network's source address is not this host's
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
  await sender.start();
  const server = settings.http.port === 0 ? null : await serve(settings, sender, registry);
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
      const last = sender.lastRoundAt;
      const fresh =
        last !== null &&
        Date.now() - last.getTime() <= HEALTHY_WITHIN_INTERVALS * settings.intervalSeconds * 1000;
      response.writeHead(fresh ? 200 : 503, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          status: fresh ? 'ok' : 'heartbeats late',
          lastHeartbeatAt: last?.toISOString() ?? null,
        }),
      );
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.http.port, settings.http.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
