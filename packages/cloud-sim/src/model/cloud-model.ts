import { randomUUID } from 'node:crypto';
import { EvacuationEngine, type EvacuationSettings } from './evacuation-engine.ts';
import { MigrationStore } from './migration-store.ts';
import { UnknownFlavorError, UnknownHostError } from './model-errors.ts';
import type {
  ReceivedExternalEvent,
  SimAggregate,
  SimFlavor,
  SimHost,
  SimImage,
  SimServer,
} from './records.ts';
import { ServerStore } from './server-store.ts';

export interface CloudModelSettings {
  /** Seconds between two heartbeats of a nova-compute service (Nova `report_interval`, default 10). */
  reportIntervalSeconds: number;
  /** Seconds without a heartbeat after which a service is `down` (Nova `service_down_time`, default 60). */
  serviceDownTimeSeconds: number;
  /** Milliseconds from a Redfish `On` until nova-compute runs again (default 0). */
  bootMilliseconds: number;
  evacuation: EvacuationSettings;
}

export const DEFAULT_MODEL_SETTINGS: CloudModelSettings = {
  reportIntervalSeconds: 10,
  serviceDownTimeSeconds: 60,
  bootMilliseconds: 0,
  evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 500 },
};

export interface AddServerOptions {
  name?: string;
  host: string;
  flavorId?: string;
  imageId?: string;
  metadata?: Record<string, string>;
  tags?: ReadonlyArray<string>;
  vmState?: SimServer['vmState'];
  tenantId?: string;
  id?: string;
}

/**
 * The state of the simulated cloud and its behaviour over time:
 * - hosts whose nova-compute reports every `report_interval` seconds while its process runs, the
 *   machine is powered on and the host is not partitioned; `updated_at` is the last report and
 *   `state` is `down` once `service_down_time` passed since it, or at once when `forced_down`
 *   (Nova's servicegroup DB driver). Heartbeats are computed, not timed, so 1,000 hosts cost nothing;
 * - killing a host stops its nova-compute (power stays on until it is fenced through its BMC);
 *   reviving it restarts nova-compute, which, as Nova's `init_host` does, moves evacuation migrations
 *   from this host in `accepted`, `pre-migrating` or `done` to `completed`;
 * - servers, migrations, flavors, aggregates, images and received server external events.
 */
export class CloudModel {
  readonly settings: CloudModelSettings;
  readonly hosts = new Map<string, SimHost>();
  readonly servers = new ServerStore();
  readonly migrations = new MigrationStore();
  readonly flavors = new Map<string, SimFlavor>();
  readonly aggregates = new Map<number, SimAggregate>();
  readonly images = new Map<string, SimImage>();
  readonly externalEvents: ReceivedExternalEvent[] = [];
  readonly evacuation: EvacuationEngine;
  /** Per host name: how many times its BMC switched it off and on (no count when it already was). */
  readonly powerActions = new Map<string, { off: number; on: number }>();
  /** The non-compute services (`nova-conductor`, `nova-scheduler` on host `controller`, zone `internal`). */
  readonly controlServices: Array<{
    binary: string;
    serviceId: string;
    serviceNumber: number;
    createdAt: number;
  }> = [];
  private nextServiceNumber = 1;
  private nextInstanceNumber = 1;
  private nextAggregateId = 1;
  private nextImageOrder = 1;
  private readonly bootTimers = new Set<NodeJS.Timeout>();

  constructor(
    settings: Partial<CloudModelSettings> = {},
    readonly now: () => number = Date.now,
  ) {
    this.settings = {
      ...DEFAULT_MODEL_SETTINGS,
      ...settings,
      evacuation: { ...DEFAULT_MODEL_SETTINGS.evacuation, ...settings.evacuation },
    };
    this.evacuation = new EvacuationEngine(this);
    for (const binary of ['nova-conductor', 'nova-scheduler']) {
      this.controlServices.push({
        binary,
        serviceId: randomUUID(),
        serviceNumber: this.nextServiceNumber++,
        createdAt: this.now(),
      });
    }
  }

  // ---------------------------------------------------------------- hosts and heartbeats

  addHost(name: string, options: { bmcUsername?: string; bmcPassword?: string } = {}): SimHost {
    if (this.hosts.has(name)) throw new Error(`host ${name} exists`);
    const now = this.now();
    const order = this.hosts.size;
    const host: SimHost = {
      name,
      order,
      serviceId: randomUUID(),
      serviceNumber: this.nextServiceNumber++,
      hypervisorId: randomUUID(),
      hostIp: `192.168.${Math.floor(order / 250)}.${(order % 250) + 1}`,
      disabled: false,
      disabledReason: null,
      forcedDown: false,
      computeRunning: true,
      poweredOn: true,
      partitioned: false,
      heartbeatEpoch: now,
      frozenHeartbeat: null,
      serviceUpdatedAt: null,
      createdAt: now,
      bmc: {
        username: options.bmcUsername ?? 'admin',
        password: options.bmcPassword ?? `bmc-${name}`,
        systemId: name,
        uuid: randomUUID(),
        alreadyOffStatus: 204,
        rejectOnAfterForceOff: 0,
        onRejectionsLeft: 0,
        unreachable: false,
      },
    };
    this.hosts.set(name, host);
    return host;
  }

  /** @throws UnknownHostError (`no host named <name>`) */
  host(name: string): SimHost {
    const host = this.hosts.get(name);
    if (!host) throw new UnknownHostError([name], `no host named ${name}`);
    return host;
  }

  /**
   * Checks that every name is a host of this cloud, before a change to several hosts begins.
   * @throws UnknownHostError naming every unknown host (message `unknown hosts: a, b`)
   */
  requireHosts(names: ReadonlyArray<string>): void {
    const unknown = names.filter((name) => !this.hosts.has(name));
    if (unknown.length > 0) throw new UnknownHostError(unknown);
  }

  /** True while reports arrive: nova-compute runs, the machine is on, the host is not partitioned. */
  heartbeating(host: SimHost): boolean {
    return host.computeRunning && host.poweredOn && !host.partitioned;
  }

  /** Time (epoch milliseconds) of the host's last heartbeat. */
  lastHeartbeat(host: SimHost, now = this.now()): number {
    if (host.frozenHeartbeat !== null) return host.frozenHeartbeat;
    const interval = this.settings.reportIntervalSeconds * 1000;
    return host.heartbeatEpoch + Math.floor((now - host.heartbeatEpoch) / interval) * interval;
  }

  /** Nova's servicegroup: up when not forced down and the last report is at most service_down_time old. */
  serviceIsUp(host: SimHost, now = this.now()): boolean {
    if (host.forcedDown) return false;
    return now - this.lastHeartbeat(host, now) <= this.settings.serviceDownTimeSeconds * 1000;
  }

  /** The service's `updated_at`: the later of its last report and its last API update. */
  serviceUpdatedAt(host: SimHost, now = this.now()): number {
    return Math.max(this.lastHeartbeat(host, now), host.serviceUpdatedAt ?? 0);
  }

  /** Runs a change to a host's liveness, freezing or restarting its heartbeats as needed. */
  private changeLiveness(host: SimHost, change: () => void): void {
    const now = this.now();
    const before = this.heartbeating(host);
    const last = this.lastHeartbeat(host, now);
    change();
    const after = this.heartbeating(host);
    if (before && !after) host.frozenHeartbeat = last;
    if (!before && after) {
      host.frozenHeartbeat = null;
      host.heartbeatEpoch = now;
    }
  }

  /** nova-compute dies (SIGKILL): heartbeats stop, the machine and its BMC stay on. */
  killHost(name: string): void {
    const host = this.host(name);
    this.changeLiveness(host, () => {
      host.computeRunning = false;
    });
  }

  /**
   * nova-compute starts again (a restart when it was running): it reports at once and cleans up
   * what was evacuated from it (migrations accepted/pre-migrating/done → completed). A powered-off
   * host is powered on first.
   */
  reviveHost(name: string): void {
    const host = this.host(name);
    this.changeLiveness(host, () => {
      host.poweredOn = true;
      host.computeRunning = true;
    });
    this.migrations.completeEvacuationsFrom(name, this.now());
  }

  /** Cuts hosts off the control plane (their reports stop arriving) or reconnects them (no restart). */
  setPartitioned(names: ReadonlyArray<string>, partitioned: boolean): void {
    this.requireHosts(names);
    for (const name of names) {
      const host = this.host(name);
      this.changeLiveness(host, () => {
        host.partitioned = partitioned;
      });
    }
  }

  /** Power off (Redfish ForceOff): nova-compute stops with the machine. */
  powerOff(name: string): void {
    const host = this.host(name);
    if (host.poweredOn) this.countPowerAction(name, 'off');
    this.changeLiveness(host, () => {
      host.poweredOn = false;
      host.computeRunning = false;
    });
    host.bmc.onRejectionsLeft = host.bmc.rejectOnAfterForceOff;
  }

  /** Power on (Redfish On): the machine boots and nova-compute starts after `bootMilliseconds`. */
  powerOn(name: string): void {
    const host = this.host(name);
    if (host.poweredOn) return;
    this.countPowerAction(name, 'on');
    this.changeLiveness(host, () => {
      host.poweredOn = true;
    });
    const start = () => {
      if (host.poweredOn && !host.computeRunning) this.reviveHost(name);
    };
    if (this.settings.bootMilliseconds <= 0) start();
    else {
      const timer = setTimeout(() => {
        this.bootTimers.delete(timer);
        start();
      }, this.settings.bootMilliseconds);
      this.bootTimers.add(timer);
    }
  }

  private countPowerAction(name: string, action: 'off' | 'on'): void {
    const counts = this.powerActions.get(name) ?? { off: 0, on: 0 };
    counts[action]++;
    this.powerActions.set(name, counts);
  }

  /** The availability zone of a host: the first aggregate with one that holds the host, else `nova`. */
  zoneOf(hostName: string): string {
    for (const aggregate of this.aggregates.values()) {
      if (aggregate.availabilityZone && aggregate.hosts.includes(hostName)) return aggregate.availabilityZone;
    }
    return 'nova';
  }

  // ---------------------------------------------------------------- servers

  addServer(options: AddServerOptions): SimServer {
    const host = this.host(options.host);
    const flavor =
      options.flavorId === undefined
        ? (this.flavors.get('1') ?? [...this.flavors.values()][0])
        : this.flavors.get(options.flavorId);
    if (!flavor) throw new UnknownFlavorError(options.flavorId ?? '1');
    const now = this.now();
    const vmState = options.vmState ?? 'active';
    const number = this.nextInstanceNumber++;
    const server: SimServer = {
      id: options.id ?? randomUUID(),
      name: options.name ?? `server-${number}`,
      tenantId: options.tenantId ?? 'admin',
      userId: 'admin',
      metadata: { ...options.metadata },
      tags: [...(options.tags ?? [])],
      fault: null,
      imageId: options.imageId ?? [...this.images.keys()][0] ?? randomUUID(),
      flavor: {
        vcpus: flavor.vcpus,
        ram: flavor.ram,
        disk: flavor.disk,
        ephemeral: flavor.ephemeral,
        swap: flavor.swap,
        original_name: flavor.name,
        extra_specs: { ...flavor.extraSpecs },
      },
      host: null,
      vmState,
      taskState: null,
      powerState: vmState === 'active' ? 1 : vmState === 'stopped' ? 4 : 0,
      locked: false,
      lockedReason: null,
      availabilityZone: this.zoneOf(host.name),
      createdAt: now,
      updatedAt: now,
      launchedAt: now,
      instanceNumber: number,
    };
    this.servers.add(server);
    this.servers.setHost(server, host.name);
    return server;
  }

  touch(server: SimServer): void {
    server.updatedAt = this.now();
  }

  /** Nova's `host_status` (2.16+): DOWN when forced down, MAINTENANCE when disabled, UP or UNKNOWN by heartbeat. */
  hostStatus(server: SimServer): string {
    if (!server.host) return '';
    const host = this.hosts.get(server.host);
    if (!host) return '';
    if (host.forcedDown) return 'DOWN';
    if (host.disabled) return 'MAINTENANCE';
    return this.serviceIsUp(host) ? 'UP' : 'UNKNOWN';
  }

  // ---------------------------------------------------------------- aggregates, flavors, images

  addAggregate(name: string, availabilityZone: string | null = null): SimAggregate {
    const aggregate: SimAggregate = {
      id: this.nextAggregateId++,
      uuid: randomUUID(),
      name,
      availabilityZone,
      hosts: [],
      metadata: availabilityZone ? { availability_zone: availabilityZone } : {},
      createdAt: this.now(),
      updatedAt: null,
    };
    this.aggregates.set(aggregate.id, aggregate);
    return aggregate;
  }

  addFlavor(flavor: Partial<SimFlavor> & { id: string; name: string }): SimFlavor {
    const record: SimFlavor = {
      ram: 128,
      vcpus: 1,
      disk: 1,
      ephemeral: 0,
      swap: 0,
      isPublic: true,
      description: null,
      extraSpecs: {},
      ...flavor,
    };
    this.flavors.set(record.id, record);
    return record;
  }

  addImage(image: Partial<SimImage> & { name: string | null }): SimImage {
    const now = this.now();
    const record: SimImage = {
      id: randomUUID(),
      status: 'active',
      visibility: 'shared',
      tags: [],
      properties: {},
      diskFormat: 'raw',
      containerFormat: 'bare',
      createdAt: now,
      updatedAt: now,
      order: this.nextImageOrder++,
      ...image,
    };
    this.images.set(record.id, record);
    return record;
  }

  /** Stops every timer (evacuations in flight, boots). */
  close(): void {
    this.evacuation.close();
    for (const timer of this.bootTimers) clearTimeout(timer);
    this.bootTimers.clear();
  }
}
