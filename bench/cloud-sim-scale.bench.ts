// cloud-sim scale mode: 1,000 hosts and 20,000 servers. Measures the list calls the workers make:
// the simulated API's latency (raw HTTP) next to a small cloud (3 hosts, 60 servers) measured in the
// same run as the baseline, and the same calls through the client (HTTP + zod validation).
// Target: every list call answers under 50 ms at scale.
// Settings: BENCH_ROUNDS (40; 3 in smoke mode), BENCH_TIME_LIMIT_SECONDS (600; 120 in smoke mode).
// Smoke mode (BENCH_SMOKE=1 or --smoke): 50 hosts and 500 servers. It creates nothing outside this
// process (no vhost, no Redis key); both simulated clouds are closed on every way out.
import { cpus, loadavg } from 'node:os';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { createOpenStackClients, type NovaClient } from '@lifeguard/openstack';
import { BenchRun, SMOKE, setting } from './support/bench-run.ts';

const ROUNDS = setting('BENCH_ROUNDS', 40, 3);
const SCALE = SMOKE ? { hosts: 50, servers: 500 } : { hosts: 1000, servers: 20_000 };
const bench = new BenchRun('the cloud-sim scale benchmark', SMOKE ? 120 : 600);

function clientFor(sim: CloudSim): NovaClient {
  return createOpenStackClients({
    config: {
      name: 'bench',
      source: 'bench',
      authType: 'admin_token',
      auth: { token: 'admin:admin' },
      regionName: null,
      interface: 'public',
      endpointOverrides: { compute: sim.urls.compute, image: sim.urls.image },
      apiTimeoutSeconds: null,
    },
  }).compute;
}

function lastHost(sim: CloudSim): string {
  return [...sim.model.hosts.keys()].at(-1)!;
}

/** A list call: its raw HTTP form and the client call. */
interface Call {
  name: string;
  path: (sim: CloudSim) => string;
  client: (nova: NovaClient, sim: CloudSim) => Promise<unknown>;
}

const CALLS: Call[] = [
  {
    name: 'GET /os-services?binary=nova-compute',
    path: () => '/os-services?binary=nova-compute',
    client: (nova) => nova.listServices({ binary: 'nova-compute' }),
  },
  {
    name: 'GET /os-services?host=<host>',
    path: (sim) => `/os-services?binary=nova-compute&host=${lastHost(sim)}`,
    client: (nova, sim) => nova.listServices({ binary: 'nova-compute', host: lastHost(sim) }),
  },
  {
    name: 'GET /servers/detail?host=<host>&all_tenants=1',
    path: (sim) => `/servers/detail?all_tenants=1&host=${lastHost(sim)}`,
    client: (nova, sim) => nova.listServers({ host: lastHost(sim) }),
  },
  {
    name: 'GET /servers/detail?limit=1000 (one page)',
    path: () => '/servers/detail?all_tenants=1&limit=1000',
    client: async (nova, sim) => {
      const page = await fetch(`${sim.urls.compute}/servers/detail?all_tenants=1&limit=1000`, {
        headers: { 'x-auth-token': 'admin:admin', 'openstack-api-version': 'compute 2.73' },
      });
      await page.json();
      return nova;
    },
  },
  {
    name: 'GET /os-hypervisors/detail',
    path: () => '/os-hypervisors/detail',
    client: (nova) => nova.listHypervisors(),
  },
  {
    name: 'GET /os-migrations?source_compute=<host>',
    path: (sim) => `/os-migrations?source_compute=${lastHost(sim)}&migration_type=evacuation`,
    client: (nova, sim) => nova.listMigrations({ sourceCompute: lastHost(sim), migrationType: 'evacuation' }),
  },
  { name: 'GET /os-aggregates', path: () => '/os-aggregates', client: (nova) => nova.listAggregates() },
];

async function raw(sim: CloudSim, path: string): Promise<void> {
  const response = await fetch(`${sim.urls.compute}${path}`, {
    headers: { 'x-auth-token': 'admin:admin', 'openstack-api-version': 'compute 2.73' },
  });
  await response.arrayBuffer();
}

/** p50 and p95 of ROUNDS runs, in milliseconds (after 3 warm-up runs). */
async function measure(run: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let index = 0; index < 3; index++) await run();
  const times: number[] = [];
  for (let index = 0; index < ROUNDS; index++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((left, right) => left - right);
  return { p50: times[Math.floor(ROUNDS / 2)]!, p95: times[Math.floor(ROUNDS * 0.95)]! };
}

const cell = (value: number, width: number) => value.toFixed(2).padStart(width);

async function main(): Promise<void> {
  const seeding = performance.now();
  bench.phase(`starting cloud-sim with ${SCALE.hosts} hosts and ${SCALE.servers} servers`);
  const large = await startCloudSim({ ...SCALE, redfishPort: false });
  const closeLarge = bench.resource('the large cloud-sim', () => large.close());
  const seeded = performance.now() - seeding;
  const small = await startCloudSim({ hosts: 3, servers: 60, redfishPort: false });
  const closeSmall = bench.resource('the small cloud-sim', () => small.close());
  // Some evacuation history on the measured host, as after an incident.
  for (const sim of [large, small]) {
    const host = lastHost(sim);
    for (const server of sim.model.servers.onHost(host).slice(0, 5)) {
      const migration = sim.model.migrations.create(server.id, host, null, Date.now());
      sim.model.migrations.setStatus(migration, 'done', Date.now());
    }
  }
  const nova = clientFor(large);
  console.log(
    `scale mode: ${large.model.hosts.size} hosts, ${large.model.servers.size} servers (started in ${seeded.toFixed(0)} ms); baseline: 3 hosts, 60 servers; ${ROUNDS} rounds; milliseconds`,
  );
  console.log(
    `${'call'.padEnd(48)} ${'HTTP p50'.padStart(9)} ${'HTTP p95'.padStart(9)} ${'base p50'.padStart(9)} ${'ratio'.padStart(6)} ${'client p50'.padStart(11)} ${'client p95'.padStart(11)}  under 50 ms`,
  );
  let allUnder = true;
  for (const call of CALLS) {
    bench.phase(`measuring ${call.name}`);
    const atScale = await measure(() => raw(large, call.path(large)));
    const baseline = await measure(() => raw(small, call.path(small)));
    const client = await measure(() => call.client(nova, large));
    const under = atScale.p50 < 50;
    allUnder &&= under;
    console.log(
      `${call.name.padEnd(48)} ${cell(atScale.p50, 9)} ${cell(atScale.p95, 9)} ${cell(baseline.p50, 9)} ${(atScale.p50 / baseline.p50).toFixed(1).padStart(6)} ${cell(client.p50, 11)} ${cell(client.p95, 11)}  ${under ? 'yes' : 'NO'}`,
    );
  }
  console.log(
    `load average during the run: ${loadavg()
      .map((each) => each.toFixed(2))
      .join(' ')} (${cpus().length} CPUs)`,
  );
  console.log(
    allUnder
      ? 'every list call answers under 50 ms (HTTP p50) at scale'
      : 'some list calls take 50 ms or more (HTTP p50) at scale',
  );
  await closeLarge();
  await closeSmall();
}

await bench.run(main);
