import type { MigrationStore } from './migration-store.ts';
import type { SimHost, SimMigration, SimServer } from './records.ts';
import type { ServerStore } from './server-store.ts';

export interface EvacuationSettings {
  /** Milliseconds before the API answers an evacuate call (accept latency). */
  acceptMilliseconds: number;
  /** Milliseconds from acceptance to the server being ACTIVE on its new host (rebuild time). */
  rebuildMilliseconds: number;
}

/**
 * What the evacuation engine reads and changes of the simulated cloud: the CloudModel that owns the
 * engine, declared here so that the engine does not import the model that creates it.
 */
export interface EvacuationWorld {
  readonly settings: { readonly evacuation: EvacuationSettings };
  readonly hosts: ReadonlyMap<string, SimHost>;
  readonly servers: ServerStore;
  readonly migrations: MigrationStore;
  /** The simulated clock, in milliseconds since the epoch. */
  now(): number;
  /** Marks a server changed (its `updated` time). */
  touch(server: SimServer): void;
  /** The availability zone of a host. */
  zoneOf(hostName: string): string;
  /** Whether a host's nova-compute counts as up. */
  serviceIsUp(host: SimHost): boolean;
}

/** The fault Nova records when its scheduler finds no host for a server (NoValidHost). */
export const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';

/**
 * How an injected evacuation failure ends: `error` as when the scheduler finds no valid host
 * (migration `error`, server ERROR on its old host), `failed` as when the rebuild fails on the
 * destination (migration `failed`, server ERROR).
 */
export type EvacuationFailureMode = 'error' | 'failed';

interface InjectedFailure {
  mode: EvacuationFailureMode;
  /** Attempts left to fail; Infinity for every attempt. */
  remaining: number;
}

/**
 * Nova's evacuation, in time (docs/nova-facts.md#evacuation-in-nova): the API sets task_state `rebuilding` and
 * creates the migration `accepted`; the scheduler picks an enabled, up host other than the source
 * (honouring a requested host) — none: migration `error`, server ERROR with the fault "No valid host
 * was found"; the destination claims
 * (`pre-migrating`) and rebuilds (`rebuild_spawning`); after the rebuild time the server is on the
 * destination with its power state kept (ACTIVE, or SHUTOFF when it was stopped; before 2.95) and the
 * migration is `done`. Counts evacuate calls per server ("evacuated exactly once" tests).
 */
export class EvacuationEngine {
  /** Evacuate calls accepted per server id. */
  readonly calls = new Map<string, number>();
  private readonly failures = new Map<string, InjectedFailure>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly model: EvacuationWorld) {}

  /** Makes the next `times` evacuations of these servers fail (default: every one). */
  injectFailures(
    serverIds: ReadonlyArray<string>,
    mode: EvacuationFailureMode,
    times = Number.POSITIVE_INFINITY,
  ): void {
    for (const id of serverIds) this.failures.set(id, { mode, remaining: times });
  }

  clearFailures(serverIds?: ReadonlyArray<string>): void {
    if (!serverIds) this.failures.clear();
    else for (const id of serverIds) this.failures.delete(id);
  }

  /** How many evacuations are still running (accepted or pre-migrating). */
  get inFlight(): number {
    return this.timers.size;
  }

  /**
   * Starts an evacuation the API has validated: counts the call, sets task_state `rebuilding`,
   * creates the `accepted` migration and schedules the rest.
   * @param stopAfter end stopped on the destination (microversion 2.95+)
   */
  start(server: SimServer, requestedHost: string | null, stopAfter: boolean): SimMigration {
    const model = this.model;
    const now = model.now();
    this.calls.set(server.id, (this.calls.get(server.id) ?? 0) + 1);
    const source = server.host!;
    const originalVmState = server.vmState;
    server.taskState = 'rebuilding';
    model.touch(server);
    const migration = model.migrations.create(server.id, source, requestedHost, now);
    const rebuild = this.model.settings.evacuation.rebuildMilliseconds;
    this.later(Math.min(20, rebuild / 4), () => {
      if (!model.servers.get(server.id)) return;
      const failure = this.takeFailure(server.id);
      const destination = failure?.mode === 'error' ? null : this.schedule(source, requestedHost);
      if (!destination) {
        model.migrations.setStatus(migration, 'error', model.now());
        this.endInError(server, NO_VALID_HOST);
        return;
      }
      migration.destCompute = destination.name;
      migration.destHost = destination.hostIp;
      model.migrations.setStatus(migration, 'pre-migrating', model.now());
      server.taskState = 'rebuild_spawning';
      server.powerState = 0;
      model.touch(server);
      this.later(Math.max(0, rebuild - Math.min(20, rebuild / 4)), () => {
        if (!model.servers.get(server.id)) return;
        if (failure?.mode === 'failed') {
          model.migrations.setStatus(migration, 'failed', model.now());
          this.endInError(server, `Failed to rebuild instance ${server.id} on ${destination.name}`);
          return;
        }
        model.servers.setHost(server, destination.name);
        server.availabilityZone = model.zoneOf(destination.name);
        const stopped = stopAfter || originalVmState === 'stopped';
        server.vmState = stopped ? 'stopped' : 'active';
        server.powerState = stopped ? 4 : 1;
        server.taskState = null;
        model.touch(server);
        model.migrations.setStatus(migration, 'done', model.now());
      });
    });
    return migration;
  }

  /** The scheduler: a requested host if it can take the server, else the least loaded enabled, up host. */
  private schedule(source: string, requestedHost: string | null): SimHost | null {
    const model = this.model;
    const usable = (host: SimHost) =>
      host.name !== source && !host.disabled && model.serviceIsUp(host) && host.poweredOn;
    if (requestedHost) {
      const host = model.hosts.get(requestedHost);
      return host && usable(host) ? host : null;
    }
    let best: SimHost | null = null;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (const host of model.hosts.values()) {
      if (!usable(host)) continue;
      const load = model.servers.countOnHost(host.name);
      if (load < bestLoad) {
        best = host;
        bestLoad = load;
      }
    }
    return best;
  }

  private endInError(server: SimServer, message: string): void {
    server.vmState = 'error';
    server.taskState = null;
    server.fault = { code: 500, message, created: this.model.now() };
    this.model.touch(server);
  }

  private takeFailure(serverId: string): InjectedFailure | null {
    const failure = this.failures.get(serverId);
    if (!failure) return null;
    failure.remaining--;
    if (failure.remaining <= 0) this.failures.delete(serverId);
    return failure;
  }

  private later(milliseconds: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, milliseconds);
    this.timers.add(timer);
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
