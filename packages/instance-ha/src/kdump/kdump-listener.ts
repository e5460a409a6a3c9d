import { createSocket, type Socket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@lifeguard/runtime';
import { shortHostname } from '../services/short-hostname.ts';
import { canonicalAddress } from './address.ts';
import { type KdumpRejection, parseKdumpPacket } from './kdump-packet.ts';
import type { KdumpStore } from './kdump-store.ts';

/** Resolves an address to host names (reverse DNS); injectable for tests. */
export type ReverseLookup = (address: string) => Promise<string[]>;

export interface KdumpListenerOptions {
  /** UDP port (UDP_PORT, default 7410); 0 picks a free port (read `port` after start). */
  port: number;
  /** Bind address: `::` (default, IPv6 and IPv4 through mapped addresses), `0.0.0.0`, `::1`, ... */
  host?: string;
  /** Canonical source address → compute host (KDUMP_ADDRESS_MAP); consulted before reverse DNS. */
  addressMap: ReadonlyMap<string, string>;
  store: KdumpStore;
  logger: Logger;
  /** Reverse DNS (default `dns.reverse`), used when the address map has no entry. */
  reverseLookup?: ReverseLookup;
  /** Seconds a reverse-DNS answer is remembered (default 300; failures 60). */
  reverseCacheSeconds?: number;
}

/** Counts since start. */
export interface KdumpListenerCounts {
  accepted: number;
  garbage: Record<KdumpRejection, number>;
  unknownSource: number;
  storeErrors: number;
}

/**
 * The fence_kdump listener (docs/instance-ha-rules.md#kdump, docs/instance-ha-rules.md#fence_kdump-packets): one UDP socket, dual-stack by default
 * (IPv4 senders arrive as `::ffff:a.b.c.d` and are normalised). A valid message's source address is
 * mapped to a compute host by KDUMP_ADDRESS_MAP first, then by reverse DNS (short name); the packet
 * time is recorded in the KdumpStore for every replica to see. Invalid datagrams are counted by reason
 * and ignored; packets from unknown sources are counted and logged (at most once a minute per address).
 *
 * Events: `packet` ({host, address, at}), `garbage` ({reason, address}), `unknown-source` ({address}).
 */
export class KdumpListener extends EventEmitter {
  private socket: Socket | null = null;
  private readonly reverseCache = new Map<string, { host: string | null; until: number }>();
  private readonly pendingLookups = new Map<string, Promise<string | null>>();
  private readonly warnedAt = new Map<string, number>();
  private readonly pendingWrites = new Set<Promise<void>>();
  readonly counts: KdumpListenerCounts = {
    accepted: 0,
    garbage: { 'wrong-length': 0, 'bad-magic': 0, 'bad-version': 0 },
    unknownSource: 0,
    storeErrors: 0,
  };

  constructor(private readonly options: KdumpListenerOptions) {
    super();
  }

  /** The bound port (after start). */
  get port(): number {
    return (this.socket?.address() as AddressInfo | undefined)?.port ?? 0;
  }

  /** Binds the socket. @throws the bind error (EADDRINUSE, EACCES, ...) */
  async start(): Promise<void> {
    const host = this.options.host ?? '::';
    const ipv6 = host.includes(':');
    try {
      this.socket = await this.bind(ipv6 ? 'udp6' : 'udp4', host);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (host !== '::' || (code !== 'EAFNOSUPPORT' && code !== 'EADDRNOTAVAIL')) throw error;
      this.options.logger.warn({ err: error }, 'kdump listener: IPv6 unavailable, listening on IPv4 only');
      this.socket = await this.bind('udp4', '0.0.0.0');
    }
    this.socket.on('message', (message, remote) => this.receive(message, remote.address));
    this.socket.on('error', (error) =>
      this.options.logger.error({ err: error }, 'kdump listener socket error'),
    );
    this.options.logger.info({ host, port: this.port }, 'kdump listener started');
  }

  private bind(type: 'udp4' | 'udp6', host: string): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = createSocket(type === 'udp6' ? { type, ipv6Only: false } : { type });
      const onError = (error: Error) => {
        socket.close();
        reject(error);
      };
      socket.once('error', onError);
      socket.bind(this.options.port, host, () => {
        socket.off('error', onError);
        resolve(socket);
      });
    });
  }

  private receive(message: Buffer, rawAddress: string): void {
    const address = canonicalAddress(rawAddress) ?? rawAddress;
    const packet = parseKdumpPacket(message);
    if (!packet.valid) {
      this.counts.garbage[packet.reason]++;
      this.emit('garbage', { reason: packet.reason, address });
      this.options.logger.debug(
        { address, reason: packet.reason, bytes: message.length },
        'kdump listener: ignored datagram',
      );
      return;
    }
    const at = new Date();
    const write = this.resolve(address)
      .then(async (host) => {
        if (host === null) {
          this.counts.unknownSource++;
          this.emit('unknown-source', { address });
          const last = this.warnedAt.get(address) ?? 0;
          if (Date.now() - last > 60_000) {
            this.warnedAt.set(address, Date.now());
            this.options.logger.warn(
              { address },
              'kdump packet from an address with no host (add it to KDUMP_ADDRESS_MAP); the host falls back to power fencing',
            );
          }
          return;
        }
        await this.options.store.recordPacket(host, at);
        this.counts.accepted++;
        this.emit('packet', { host, address, at });
        this.options.logger.debug({ host, address }, 'kdump packet recorded');
      })
      .catch((error: unknown) => {
        this.counts.storeErrors++;
        this.options.logger.error({ err: error, address }, 'kdump packet could not be recorded');
      });
    this.pendingWrites.add(write);
    void write.finally(() => this.pendingWrites.delete(write));
  }

  /** The compute host (short name) of a source address, or null. */
  async resolve(address: string): Promise<string | null> {
    const mapped = this.options.addressMap.get(address);
    if (mapped !== undefined) return shortHostname(mapped);
    const cached = this.reverseCache.get(address);
    if (cached && cached.until > Date.now()) return cached.host;
    const pending = this.pendingLookups.get(address);
    if (pending) return pending;
    const lookup = this.options.reverseLookup ?? ((value: string) => dns.reverse(value));
    const promise = lookup(address)
      .then((names) => (names[0] ? shortHostname(names[0]) : null))
      .catch(() => null)
      .then((host) => {
        const seconds = host === null ? 60 : (this.options.reverseCacheSeconds ?? 300);
        this.reverseCache.set(address, { host, until: Date.now() + seconds * 1000 });
        return host;
      })
      .finally(() => this.pendingLookups.delete(address));
    this.pendingLookups.set(address, promise);
    return promise;
  }

  /** Closes the socket and waits for packets already received to be recorded. */
  async stop(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
    await Promise.allSettled([...this.pendingWrites]);
  }
}
