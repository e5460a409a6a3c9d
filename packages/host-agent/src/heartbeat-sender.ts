import { createSocket, type Socket } from 'node:dgram';
import { encodeHeartbeat } from '@lifeguard/contracts';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type ProcessEntry, processStates, readProcesses } from './process-states.ts';
import { type HeartbeatNetwork, HostAgentConfigError, type HostAgentSettings } from './settings.ts';

export interface HeartbeatSenderOptions {
  readonly settings: Pick<
    HostAgentSettings,
    'host' | 'intervalSeconds' | 'key' | 'networks' | 'watchedProcesses' | 'procPath'
  >;
  readonly logger: Logger;
  readonly registry: Registry;
  /** The processes of the host (default: /proc). */
  readonly listProcesses?: () => ProcessEntry[];
}

interface NetworkSocket {
  readonly network: HeartbeatNetwork;
  readonly socket: Socket;
  /** The monitors (`host:port`) whose last send failed: each logged once until a send to it succeeds. */
  readonly failing: Set<string>;
}

/**
 * Sends the host's signed heartbeat every interval to every monitor of every network, each network
 * from a socket of its own (bound to its source address), each packet saying which network it went
 * over and whether each watched process runs. A monitor that does not resolve or cannot be reached
 * is logged once (and counted) and tried again at the next interval: the agent never stops sending.
 */
export class HeartbeatSender {
  private readonly sockets: NetworkSocket[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly sent: Counter<'network'>;
  private readonly failed: Counter<'network'>;
  private readonly running: Gauge<'process'>;
  /** When the last round of heartbeats was sent (for /healthz). */
  lastRoundAt: Date | null = null;
  /** When a heartbeat last reached the network: a monitor resolved and was routable (for /healthz). */
  lastSentAt: Date | null = null;

  constructor(private readonly options: HeartbeatSenderOptions) {
    const registers = [options.registry];
    this.sent = new Counter({
      name: 'lifeguard_host_agent_heartbeats_sent_total',
      help: 'Heartbeats handed to the network, by network',
      labelNames: ['network'],
      registers,
    });
    this.failed = new Counter({
      name: 'lifeguard_host_agent_heartbeat_send_errors_total',
      help: 'Heartbeats that could not be sent (a monitor that does not resolve, no route), by network',
      labelNames: ['network'],
      registers,
    });
    this.running = new Gauge({
      name: 'lifeguard_host_agent_process_running',
      help: 'Whether a watched process runs on the host (1) or not (0), as the last heartbeat said',
      labelNames: ['process'],
      registers,
    });
  }

  /** Opens one socket per network (bound to its source address), sends at once, then every interval. */
  async start(): Promise<void> {
    for (const network of this.options.settings.networks) {
      const socket = await openSocket(network);
      socket.on('error', (error) =>
        this.options.logger.warn({ err: error, network: network.name }, 'heartbeat socket error'),
      );
      this.sockets.push({ network, socket, failing: new Set() });
    }
    this.round();
    this.timer = setInterval(() => this.round(), this.options.settings.intervalSeconds * 1000);
  }

  /** One heartbeat to every monitor of every network, saying what runs now. */
  round(now: Date = new Date()): void {
    const { host, key, watchedProcesses, procPath } = this.options.settings;
    const listed = this.options.listProcesses?.() ?? readProcesses(procPath);
    const processes = processStates(watchedProcesses, listed);
    for (const [name, state] of Object.entries(processes))
      this.running.set({ process: name }, state === 'running' ? 1 : 0);
    for (const entry of this.sockets) {
      const packet = encodeHeartbeat(host, key, now, { network: entry.network.name, processes });
      for (const monitor of entry.network.monitors) {
        entry.socket.send(packet, monitor.port, monitor.host, (error) => this.sentTo(entry, monitor, error));
      }
    }
    this.lastRoundAt = now;
  }

  private sentTo(entry: NetworkSocket, monitor: { host: string; port: number }, error: Error | null): void {
    const network = entry.network.name;
    const address = `${monitor.host}:${monitor.port}`;
    if (!error) {
      this.sent.inc({ network });
      this.lastSentAt = new Date();
      if (entry.failing.delete(address)) {
        this.options.logger.info(
          { network, monitor: address },
          `heartbeats on network ${network} reach ${address} again`,
        );
      }
      return;
    }
    this.failed.inc({ network });
    if (!entry.failing.has(address)) {
      this.options.logger.warn(
        { network, monitor: address, err: error },
        `heartbeat on network ${network} not sent to ${address}: ${error.message}; trying again every interval`,
      );
      entry.failing.add(address);
    }
  }

  /** Stops sending and closes the sockets. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const sockets = this.sockets.splice(0);
    await Promise.all(
      sockets.map(({ socket }) => new Promise<void>((resolve) => socket.close(() => resolve()))),
    );
  }
}

/**
 * A UDP socket for `network`: IPv6 when its source address or first monitor is, bound to the source
 * address.
 * @throws HostAgentConfigError naming the network's variable when the address is not this host's
 */
async function openSocket(network: HeartbeatNetwork): Promise<Socket> {
  const sample = network.sourceAddress ?? network.monitors[0]?.host ?? '';
  const socket = createSocket(sample.includes(':') ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port: 0, ...(network.sourceAddress ? { address: network.sourceAddress } : {}) }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    socket.close();
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new HostAgentConfigError([
      { key: network.variable, problem: `cannot send from ${network.sourceAddress}: ${code}` },
    ]);
  }
  return socket;
}
