import { createSocket, type Socket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@lifeguard/runtime';
import { type HeartbeatRejection, verifyHeartbeat } from './heartbeat-packet.ts';
import { HeartbeatReplayGuard } from './heartbeat-replay.ts';
import type { HeartbeatStore } from './heartbeat-store.ts';
import type { HostAgentReports } from './host-agent-reports.ts';

export interface HeartbeatListenerOptions {
  /** HEARTBEAT_PORT (7411); 0 picks a free port. */
  port: number;
  /** Bind address, default `::` (dual stack). */
  host?: string;
  keys: ReadonlyArray<Buffer>;
  store: HeartbeatStore;
  /** Where a lifeguard host agent's report (its network, its processes) is kept, when given. */
  hostAgents?: Pick<HostAgentReports, 'record'>;
  logger: Logger;
}

/** Why the listener refused a heartbeat: a verification failure, or a replay of an accepted one. */
export type HeartbeatRefusal = HeartbeatRejection | 'replayed';

/**
 * The HBV2 heartbeat listener (docs/instance-ha-rules.md#heartbeats): verified heartbeats are recorded in Redis; rejected
 * ones (failed verification, or `replayed`: see HeartbeatReplayGuard) are counted by reason. `startedAt` drives the grace period of the heartbeat gate.
 * Events: `heartbeat` ({host, report}: report is what a lifeguard host agent said, the network and
 * its processes; undefined for InstanceHA's own sender), `rejected` ({reason}).
 */
export class HeartbeatListener extends EventEmitter {
  private socket: Socket | null = null;
  private started: Date | null = null;
  private readonly replayGuard = new HeartbeatReplayGuard();
  readonly rejected: Partial<Record<HeartbeatRefusal, number>> = {};

  constructor(private readonly options: HeartbeatListenerOptions) {
    super();
  }

  get port(): number {
    return (this.socket?.address() as AddressInfo | undefined)?.port ?? 0;
  }

  /** When the listener started, or null. */
  get startedAt(): Date | null {
    return this.started;
  }

  async start(): Promise<void> {
    const host = this.options.host ?? '::';
    const socket = createSocket(host.includes(':') ? { type: 'udp6', ipv6Only: false } : { type: 'udp4' });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.options.port, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    socket.on('message', (message) => this.receive(message));
    socket.on('error', (error) =>
      this.options.logger.error({ err: error }, 'heartbeat listener socket error'),
    );
    this.socket = socket;
    this.started = new Date();
    if (this.options.keys.length === 0) {
      this.options.logger.warn('heartbeat listener has no HMAC key: every heartbeat will be rejected');
    }
    this.options.logger.info(
      { host, port: this.port, keys: this.options.keys.length },
      'heartbeat listener started',
    );
  }

  private receive(message: Buffer): void {
    const result = verifyHeartbeat(message, this.options.keys);
    if (!result.valid) {
      this.refuse(result.reason);
      return;
    }
    if (!this.replayGuard.admit(result.host, result.sentAt, message)) {
      this.refuse('replayed');
      return;
    }
    const { report } = result;
    Promise.all([
      this.options.store.record(result.host),
      report ? this.options.hostAgents?.record(result.host, report) : undefined,
    ])
      .then(() => this.emit('heartbeat', { host: result.host, report }))
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'heartbeat could not be recorded'),
      );
  }

  private refuse(reason: HeartbeatRefusal): void {
    this.rejected[reason] = (this.rejected[reason] ?? 0) + 1;
    this.emit('rejected', { reason });
  }

  async stop(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    this.started = null;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}
