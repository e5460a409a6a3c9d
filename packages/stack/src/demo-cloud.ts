import { type CloudSim, type CloudSimOptions, startCloudSim } from '@lifeguard/cloud-sim';
import { formatDisabledReason } from '@lifeguard/instance-ha';

/** The tag InstanceHA and lifeguard look for (EVACUABLE_TAG's default). */
export const DEMO_EVACUABLE_TAG = 'evacuable';
/** The aggregate of hosts lifeguard protects (metadata `evacuable=true`). */
export const DEMO_EVACUABLE_AGGREGATE = 'ha-compute';
/** An aggregate without the tag: its hosts are never fenced (TAGGED_AGGREGATES is fail-closed). */
export const DEMO_UNPROTECTED_AGGREGATE = 'general';
/** `instanceha:max_failures` of the evacuable aggregate (gate G7). */
export const DEMO_AGGREGATE_MAX_FAILURES = 3;

export interface DemoCloudOptions {
  /** Compute hosts `compute-01..compute-NN` (default 12). */
  readonly hosts?: number;
  /** Spare hosts, the last ones, disabled with a `lifeguard-reserved:` reason (default 2 from 8 hosts on, else 0). */
  readonly reservedHosts?: number;
  /** Hosts before the spares in the untagged aggregate (default 2 from 8 hosts on, else 0). */
  readonly unprotectedHosts?: number;
  /** Servers on each host that is neither spare (default 3: two evacuable, one not). */
  readonly serversPerHost?: number;
  /** Listen address (default 127.0.0.1). */
  readonly listenHost?: string;
  /** API port: Nova, Glance, Keystone, control (default 0: a free port). */
  readonly port?: number;
  /** HTTPS Redfish port of the BMCs (default 0: a free port). */
  readonly redfishPort?: number;
  /** Nova's report_interval in seconds (default 2). */
  readonly reportIntervalSeconds?: number;
  /** Nova's service_down_time in seconds (default 10). */
  readonly serviceDownTimeSeconds?: number;
  /** Milliseconds from a BMC power-on until nova-compute reports again (default 3000). */
  readonly bootMilliseconds?: number;
  /** Milliseconds an evacuate call takes to answer (default 200). */
  readonly evacuationAcceptMilliseconds?: number;
  /** Milliseconds from an accepted evacuate to ACTIVE on the new host (default 2000). */
  readonly evacuationRebuildMilliseconds?: number;
}

/** Where each demo host belongs. */
export interface DemoCloudLayout {
  /** Every compute host, in order. */
  readonly hosts: ReadonlyArray<string>;
  /** Members of `ha-compute` that run servers. */
  readonly protectedHosts: ReadonlyArray<string>;
  /** Members of `general` (untagged): lifeguard never fences them. */
  readonly unprotectedHosts: ReadonlyArray<string>;
  /** Disabled spares in `ha-compute`, enabled by RESERVED_HOSTS when a host fails. */
  readonly reservedHosts: ReadonlyArray<string>;
}

/** `compute-01`, `compute-02`, ... (two digits, three from 100 hosts on). */
export function demoHostName(number: number, hostCount: number): string {
  return `compute-${String(number).padStart(hostCount >= 100 ? 3 : 2, '0')}`;
}

/**
 * The demo layout: the last `reservedHosts` hosts are spares, the `unprotectedHosts` before them are
 * in the untagged aggregate, the rest are protected.
 * @throws RangeError when the counts leave no protected host
 */
export function demoCloudLayout(options: DemoCloudOptions = {}): DemoCloudLayout {
  const count = options.hosts ?? 12;
  const reserved = options.reservedHosts ?? (count >= 8 ? 2 : 0);
  const unprotected = options.unprotectedHosts ?? (count >= 8 ? 2 : 0);
  if (!Number.isInteger(count) || count < 1) throw new RangeError('hosts must be a whole number ≥ 1');
  if (reserved + unprotected >= count) {
    throw new RangeError(
      `hosts (${count}) must exceed reservedHosts (${reserved}) + unprotectedHosts (${unprotected})`,
    );
  }
  const hosts = Array.from({ length: count }, (_, index) => demoHostName(index + 1, count));
  const protectedCount = count - reserved - unprotected;
  return {
    hosts,
    protectedHosts: hosts.slice(0, protectedCount),
    unprotectedHosts: hosts.slice(protectedCount, protectedCount + unprotected),
    reservedHosts: hosts.slice(protectedCount + unprotected),
  };
}

/**
 * Seeds a cloud-sim (started with the layout's host names and no servers) as an operator would set up
 * Instance HA: the aggregate `ha-compute` (metadata `evacuable=true`, `instanceha:max_failures=3`) with
 * the protected hosts and the spares, the untagged aggregate `general`, flavors `ha.small` and
 * `ha.medium` with extra spec `evacuable=true`, the image `cirros-ha` tagged `evacuable`, spares
 * disabled with lifeguard's `lifeguard-reserved:` marker, and on every non-spare host `web-NN` (flavor
 * `ha.small`), `db-NN` (image `cirros-ha`, flavor `m1.small`) and `batch-NN` (`m1.tiny`, untagged
 * `cirros`: never evacuated), repeating web/db for more servers per host.
 */
export function seedDemoCloud(sim: CloudSim, layout: DemoCloudLayout, serversPerHost = 3): void {
  const { model } = sim;
  const evacuable = model.addAggregate(DEMO_EVACUABLE_AGGREGATE);
  evacuable.hosts.push(...layout.protectedHosts, ...layout.reservedHosts);
  evacuable.metadata[DEMO_EVACUABLE_TAG] = 'true';
  evacuable.metadata['instanceha:max_failures'] = String(DEMO_AGGREGATE_MAX_FAILURES);
  if (layout.unprotectedHosts.length > 0) {
    const general = model.addAggregate(DEMO_UNPROTECTED_AGGREGATE);
    general.hosts.push(...layout.unprotectedHosts);
  }
  model.addFlavor({
    id: '10',
    name: 'ha.small',
    ram: 2048,
    vcpus: 1,
    disk: 20,
    extraSpecs: { evacuable: 'true' },
  });
  model.addFlavor({
    id: '11',
    name: 'ha.medium',
    ram: 4096,
    vcpus: 2,
    disk: 40,
    extraSpecs: { evacuable: 'true' },
  });
  const plainImage = [...model.images.values()].find((image) => image.name === 'cirros');
  const taggedImage = model.addImage({ name: 'cirros-ha', tags: [DEMO_EVACUABLE_TAG] });
  for (const spare of layout.reservedHosts) {
    const host = model.host(spare);
    host.disabled = true;
    host.disabledReason = formatDisabledReason({ kind: 'reserved' });
  }
  for (const name of [...layout.protectedHosts, ...layout.unprotectedHosts]) {
    const suffix = name.replace(/^compute-/, '');
    for (let index = 0; index < serversPerHost; index++) {
      const round = Math.floor(index / 3);
      const label = round === 0 ? suffix : `${suffix}-${round + 1}`;
      const slot = index % 3;
      if (slot === 0) sim.addServer({ host: name, name: `web-${label}`, flavorId: '10' });
      else if (slot === 1)
        sim.addServer({ host: name, name: `db-${label}`, flavorId: '2', imageId: taggedImage.id });
      else sim.addServer({ host: name, name: `batch-${label}`, flavorId: '1', imageId: plainImage?.id });
    }
  }
}

/** Starts cloud-sim with the demo layout (see seedDemoCloud) and the demo's short Nova timings. */
export async function startDemoCloud(
  options: DemoCloudOptions = {},
): Promise<{ sim: CloudSim; layout: DemoCloudLayout }> {
  const layout = demoCloudLayout(options);
  const simOptions: CloudSimOptions = {
    listenHost: options.listenHost ?? '127.0.0.1',
    port: options.port ?? 0,
    redfishPort: options.redfishPort ?? 0,
    hosts: [...layout.hosts],
    servers: 0,
    model: {
      reportIntervalSeconds: options.reportIntervalSeconds ?? 2,
      serviceDownTimeSeconds: options.serviceDownTimeSeconds ?? 10,
      bootMilliseconds: options.bootMilliseconds ?? 3000,
      evacuation: {
        acceptMilliseconds: options.evacuationAcceptMilliseconds ?? 200,
        rebuildMilliseconds: options.evacuationRebuildMilliseconds ?? 2000,
      },
    },
  };
  const sim = await startCloudSim(simOptions);
  seedDemoCloud(sim, layout, options.serversPerHost ?? 3);
  return { sim, layout };
}
