import type { SimServer } from './records.ts';

/** Newest first, as Nova sorts by default (`created_at desc`, then id desc). */
function newestFirst(left: SimServer, right: SimServer): number {
  return right.createdAt - left.createdAt || right.instanceNumber - left.instanceNumber;
}

export interface ServerPage {
  servers: SimServer[];
  /** True when the page is full (Nova then adds a `next` link). */
  full: boolean;
}

/**
 * The servers of the simulated cloud, indexed by id and by host so that listing one host's servers
 * stays cheap with 20,000 servers (scale mode).
 */
export class ServerStore {
  private readonly byId = new Map<string, SimServer>();
  private readonly byHost = new Map<string, Set<string>>();
  /** Creation order (oldest first); deleted entries are removed lazily. */
  private ordered: SimServer[] = [];
  private deletedSinceCompaction = 0;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): SimServer | undefined {
    return this.byId.get(id);
  }

  add(server: SimServer): void {
    this.byId.set(server.id, server);
    this.ordered.push(server);
    if (server.host) this.index(server.host).add(server.id);
  }

  remove(id: string): SimServer | undefined {
    const server = this.byId.get(id);
    if (!server) return undefined;
    this.byId.delete(id);
    if (server.host) this.byHost.get(server.host)?.delete(id);
    this.deletedSinceCompaction++;
    if (this.deletedSinceCompaction > 1000 || this.deletedSinceCompaction > this.ordered.length / 4)
      this.compact();
    return server;
  }

  /** Moves a server to another host, keeping the host index right. */
  setHost(server: SimServer, host: string | null): void {
    if (server.host) this.byHost.get(server.host)?.delete(server.id);
    server.host = host;
    if (host) this.index(host).add(server.id);
  }

  countOnHost(host: string): number {
    return this.byHost.get(host)?.size ?? 0;
  }

  /** vCPUs, RAM (MB) and disk (GB) of the flavors of a host's servers, and their count. */
  usageOnHost(host: string): { vcpus: number; ram: number; disk: number; count: number } {
    const usage = { vcpus: 0, ram: 0, disk: 0, count: 0 };
    for (const id of this.byHost.get(host) ?? []) {
      const flavor = this.byId.get(id)!.flavor;
      usage.vcpus += flavor.vcpus;
      usage.ram += flavor.ram;
      usage.disk += flavor.disk;
      usage.count++;
    }
    return usage;
  }

  onHost(host: string): SimServer[] {
    return [...(this.byHost.get(host) ?? [])].map((id) => this.byId.get(id)!);
  }

  all(): IterableIterator<SimServer> {
    return this.byId.values();
  }

  /**
   * One page, newest first, after `marker` (exclusive).
   * @returns null when the marker is not a listed server (Nova: 400 "marker [<id>] not found")
   */
  page(options: {
    host?: string;
    accept?: (server: SimServer) => boolean;
    marker?: string;
    limit: number;
  }): ServerPage | null {
    const accept = options.accept ?? (() => true);
    const servers: SimServer[] = [];
    let passedMarker = options.marker === undefined;
    const consider = (server: SimServer): boolean => {
      if (!passedMarker) {
        if (server.id === options.marker) passedMarker = true;
        return false;
      }
      if (!accept(server)) return false;
      servers.push(server);
      return servers.length >= options.limit;
    };
    if (options.host !== undefined) {
      const candidates = this.onHost(options.host).sort(newestFirst);
      for (const server of candidates) if (consider(server)) break;
    } else {
      for (let index = this.ordered.length - 1; index >= 0; index--) {
        const server = this.ordered[index]!;
        if (!this.byId.has(server.id)) continue;
        if (consider(server)) break;
      }
    }
    if (!passedMarker) return null;
    return { servers, full: servers.length >= options.limit };
  }

  private index(host: string): Set<string> {
    let set = this.byHost.get(host);
    if (!set) {
      set = new Set();
      this.byHost.set(host, set);
    }
    return set;
  }

  private compact(): void {
    this.ordered = this.ordered.filter((server) => this.byId.get(server.id) === server);
    this.deletedSinceCompaction = 0;
  }
}
