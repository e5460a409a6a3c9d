// Benchmark of provisioning-blocks (issue 3): N ports (BENCH_PORTS, default 10,000) with a DHCP and an
// L2 block each are completed through the real RPC path — oslo.messaging envelopes on the `neutron`
// exchange, `dhcp_ready_on_ports` from one AMQP connection and `update_device_up` from another, as
// calls with replies (BENCH_MODE=cast for casts) — by provisioning-blocks as the stack runs it: a
// `service` process (RPC server, outbox relay) and a `port-status` process (subscriber, relay).
// Reported: completions per second, and the
// latency from a port's last completion being sent to its `provisioning.complete` event (and to its
// `port.status.changed` ACTIVE event) arriving at a consumer.
//
// Baseline, measured in the same run on the same broker with the same messages: a bare amqplib
// consumer process that, per message, publishes one persistent message with a confirm and acks.
// The ratios lifeguard / baseline are printed with their targets (issue 25: ≥ 0.8 to
// provisioning.complete, ≥ 0.6 end to end to port ACTIVE) and MET or NOT MET.
//
// The traffic floor, measured in the same round (traffic-floor.ts): one bare process that puts on the
// broker exactly the messages the provisioning path puts there (a confirmed reply per call, a
// persistent confirmed event per port to the subscriber's quorum queue; with the stack, a port status
// event per port too) and does nothing else. Its rate is the most any service can reach on this
// machine: the floor / baseline ratio is the ceiling of the ratios above, and lifeguard / floor says
// how much of it the service keeps.
//
// Also printed: the CPU time the consuming process used per completion (the baseline consumer's, and
// the provisioning service's including its relay and subscriber), which does not depend on how busy
// the machine is, and per completion the CPU of RabbitMQ, of Redis and of the whole machine (with
// "cores busy", which says whether the cores were saturated: then the machine's CPU per completion
// sets the rate). Each of BENCH_ROUNDS rounds (default 3) measures the baseline and then lifeguard
// with fresh ports, so both see the same background load; medians are reported.
//
// Cluster mode (BENCH_CLUSTER=1, or --cluster): after the whole measurement on the single RabbitMQ and
// Redis, the same rounds run again on a 3-node RabbitMQ cluster and a Redis Cluster (3 masters + 3
// replicas) the benchmark starts on this machine (bench/support/cluster-engines.ts): the provisioning
// processes get every node's URL, LIFEGUARD_REDIS_CLUSTER_NODES with a {hash-tagged} key prefix and
// LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE=true (q-plugin is a quorum queue), and the baseline's two
// queues are quorum queues. The medians of both are then printed side by side with cluster / single.
//
// Settings: BENCH_PORTS (10000; 200 in smoke mode), BENCH_ROUNDS (3; 1 in smoke mode), BENCH_MODE
// (call | cast), BENCH_PREFETCH (100, for both sides), BENCH_PROFILE_DIRECTORY (write V8 CPU profiles
// of the child processes there), BENCH_TIME_LIMIT_SECONDS (3600; 120 in smoke mode, 600 in smoke
// cluster mode), BENCH_CLUSTER.
//
// Run: npm run bench -- provisioning [--smoke] [--cluster]   or   node --import tsx --conditions=@lifeguard/source bench/provisioning/run.ts
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AGENT_TYPE_DHCP,
  AGENT_TYPE_OPEN_VSWITCH,
  EVENTS_EXCHANGE,
  encodeOsloBody,
  OSLO_MESSAGE_PROPERTIES,
  Port,
  QUEUES,
} from '@lifeguard/contracts';
import {
  AgentRegistry,
  MECHANISM_DRIVERS,
  PortProvisioning,
  PortStore,
  ProvisioningKeys,
  RecordStore,
} from '@lifeguard/provisioning-blocks';
import { createLogger, type RedisClient } from '@lifeguard/runtime';
import { createTestVhost, deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import amqp, { type ConfirmChannel } from 'amqplib';
import { BenchRun, CLUSTER, SMOKE, setting } from '../support/bench-run.ts';
import { startClusterEngines } from '../support/cluster-engines.ts';
import {
  type MachineCpu,
  machineCpuPer,
  processCpuMilliseconds,
  readMachineCpu,
} from '../support/machine-cpu.ts';

const root = resolve(import.meta.dirname, '../..');
const PORTS = setting('BENCH_PORTS', 10_000, 200);
const MODE = process.env.BENCH_MODE === 'cast' ? 'cast' : 'call';
const ROUNDS = setting('BENCH_ROUNDS', 3, 1);
const PREFETCH = setting('BENCH_PREFETCH', 100, 100);
// Cluster mode starts 3 RabbitMQ nodes, which alone can take minutes on a busy machine; a smoke run
// starts seven child processes, each compiling its TypeScript, which takes a loaded machine minutes too.
const bench = new BenchRun('the provisioning benchmark', SMOKE ? (CLUSTER ? 600 : 300) : 3600);
const WINDOW = 500;
const logger = createLogger({ service: 'bench', level: 'silent' });
const hex = () => randomUUID().replaceAll('-', '');

/** Where a measurement runs: the shared single RabbitMQ and Redis, or the clusters of cluster mode. */
interface Engines {
  /** LIFEGUARD_AMQP_URL of the provisioning processes: one URL, or every cluster node's. */
  readonly serviceUrl: string;
  /** One URL with the same vhost, for the benchmark's own clients (producers, watcher, baseline). */
  readonly url: string;
  /** The Redis key prefix of the run (hash-tagged on a Redis Cluster). */
  readonly prefix: string;
  /** A new Redis client for seeding (the caller quits it). */
  readonly redis: () => RedisClient;
  /** More environment of the provisioning processes (Redis Cluster nodes, quorum queues). */
  readonly environment: Record<string, string>;
  /** Whether the baseline's queues are quorum queues (cluster) or transient classic ones (single). */
  readonly quorum: boolean;
}

/** The request context a Neutron agent sends (neutron-lib admin context), so bodies have their real size. */
const CONTEXT = {
  _context_user: null,
  _context_project_id: null,
  _context_system_scope: null,
  _context_project: null,
  _context_domain: null,
  _context_user_domain: null,
  _context_project_domain: null,
  _context_is_admin: true,
  _context_read_only: false,
  _context_show_deleted: false,
  _context_auth_token: null,
  _context_global_request_id: null,
  _context_resource_uuid: null,
  _context_roles: [],
  _context_user_identity: '- - - - -',
  _context_is_admin_project: true,
  _context_user_id: null,
  _context_tenant_id: null,
  _context_tenant_name: null,
  _context_project_name: null,
  _context_user_name: null,
};

function request(
  method: string,
  args: Record<string, unknown>,
  version: string,
  replyQueue: string | null,
): Buffer {
  return Buffer.from(
    encodeOsloBody({
      method,
      args,
      version,
      ...(replyQueue ? { _msg_id: hex(), _reply_q: replyQueue, _timeout: null } : {}),
      _unique_id: hex(),
      ...CONTEXT,
      _context_request_id: `req-${randomUUID()}`,
      _context_timestamp: new Date().toISOString().replace('T', ' ').replace('Z', ''),
    }),
  );
}

const percentile = (sorted: number[], fraction: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
const format = (value: number, digits = 1) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Publishes with confirms, at most WINDOW unconfirmed at once. */
class WindowedPublisher {
  private inFlight = 0;
  private waiters: Array<() => void> = [];
  constructor(private readonly channel: ConfirmChannel) {}
  async publish(
    exchange: string,
    routingKey: string,
    body: Buffer,
    options: amqp.Options.Publish,
  ): Promise<void> {
    while (this.inFlight >= WINDOW) await new Promise<void>((done) => this.waiters.push(done));
    this.inFlight++;
    this.channel.publish(exchange, routingKey, body, options, () => {
      this.inFlight--;
      this.waiters.shift()?.();
    });
  }
  async drain(): Promise<void> {
    await this.channel.waitForConfirms();
  }
}

/** CPU time (user + system) a child process used so far, in milliseconds (Linux /proc). */
const cpuMilliseconds = (child: ChildProcess): number =>
  child.pid === undefined ? Number.NaN : processCpuMilliseconds(child.pid);

/** The health/metrics port of each child that logged one. */
const metricsPorts = new Map<ChildProcess, number>();

/**
 * Starts a child process from TypeScript and resolves once it is ready: once it prints a line that
 * `ready` accepts, or (`ready` 'readyz') once its health server answers 200 on /readyz.
 */
async function startChild(
  script: string,
  env: Record<string, string>,
  ready: ((line: string) => boolean) | 'readyz',
): Promise<ChildProcess> {
  // BENCH_PROFILE_DIRECTORY: write a V8 CPU profile of each child process there.
  const profile = process.env.BENCH_PROFILE_DIRECTORY
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIRECTORY}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', '--conditions=@lifeguard/source', resolve(root, script)],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stop = bench.resource(`${script} (pid ${child.pid})`, () => stopChild(child));
  child.once('exit', () => void stop());
  bench.phase(`waiting for ${env.LIFEGUARD_INSTANCE_NAME ?? script} to be ready`);
  const started = new Promise<ChildProcess>((done, fail) => {
    let buffer = '';
    const errors: string[] = [];
    child.stderr!.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const port = /"msg":"health and metrics server listening"/.test(line)
          ? /"port":(\d+)/.exec(line)
          : null;
        if (port) metricsPorts.set(child, Number(port[1]));
      }
      if (ready === 'readyz' ? metricsPorts.has(child) : lines.some(ready)) done(child);
    });
    child.once('exit', (code) => fail(new Error(`${script} exited ${code}: ${errors.join('')}`)));
  });
  await started;
  if (ready === 'readyz') await untilReady(child);
  return child;
}

/** Waits until a child's health server answers 200 on /readyz (asked every 100 ms). */
async function untilReady(child: ChildProcess): Promise<void> {
  const url = `http://127.0.0.1:${metricsPorts.get(child)}/readyz`;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`pid ${child.pid} exited (${child.exitCode}) before it was ready`);
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((done) => setTimeout(done, 15_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

interface Figures {
  /** CPU time of the consuming process (baseline consumer / lifeguard service) per completion, in milliseconds. */
  cpuPerCompletion?: number;
  /** CPU per completion of the whole machine, of RabbitMQ and of Redis, in milliseconds. */
  machine: MachineCpu;
  perSecond: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** Sends every port's two messages from two connections, as fast as confirms allow. */
async function produce(
  url: string,
  exchange: string,
  routingKey: string,
  ids: string[],
  sentAt: Map<string, number>,
  withReplies: boolean,
  onReply: () => void,
): Promise<Array<amqp.ChannelModel>> {
  const connections = await Promise.all([amqp.connect(url), amqp.connect(url)]);
  const publishers: WindowedPublisher[] = [];
  const replyQueues: Array<string | null> = [];
  for (const connection of connections) {
    publishers.push(new WindowedPublisher(await connection.createConfirmChannel()));
    if (withReplies) {
      const channel = await connection.createChannel();
      const queue = `reply_${hex()}`;
      await channel.assertQueue(queue, { durable: false, arguments: { 'x-expires': 1_800_000 } });
      await channel.consume(queue, () => onReply(), { noAck: true });
      replyQueues.push(queue);
    } else {
      replyQueues.push(null);
    }
  }
  const [dhcp, l2] = publishers as [WindowedPublisher, WindowedPublisher];
  const options = { ...OSLO_MESSAGE_PROPERTIES, ...(withReplies ? { expiration: '60000' } : {}) };
  for (const id of ids) {
    const dhcpBody = request('dhcp_ready_on_ports', { port_ids: [id] }, '1.5', replyQueues[0]!);
    const l2Body = request(
      'update_device_up',
      { device: id, agent_id: 'ovs-agent-compute-1', host: 'compute-1' },
      '1.9',
      replyQueues[1]!,
    );
    sentAt.set(id, performance.now());
    await Promise.all([
      dhcp.publish(exchange, routingKey, dhcpBody, options),
      l2.publish(exchange, routingKey, l2Body, options),
    ]);
  }
  await Promise.all(publishers.map((publisher) => publisher.drain()));
  return connections;
}

async function baseline(engines: Engines, ids: string[]): Promise<Figures> {
  const { url } = engines;
  const input = 'bench.baseline.in';
  const output = 'bench.baseline.out';
  const setup = await amqp.connect(url);
  const channel = await setup.createChannel();
  const queueOptions = engines.quorum
    ? { durable: true, arguments: { 'x-queue-type': 'quorum' } }
    : { durable: false };
  await channel.assertQueue(input, queueOptions);
  await channel.assertQueue(output, queueOptions);
  const consumer = await startChild(
    'bench/provisioning/baseline-consumer.ts',
    {
      BENCH_AMQP_URL: url,
      BENCH_INPUT_QUEUE: input,
      BENCH_OUTPUT_QUEUE: output,
      BENCH_PREFETCH: String(PREFETCH),
    },
    (line) => line === 'ready',
  );
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let received = 0;
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolveDone) => {
    finished = resolveDone;
  });
  await channel.consume(
    output,
    (message) => {
      if (!message) return;
      received++;
      // The second message of a port is its "last completion".
      const id = (
        JSON.parse(JSON.parse(message.content.toString())['oslo.message']) as { args: { device?: string } }
      ).args.device;
      if (id) latencies.push(performance.now() - sentAt.get(id)!);
      if (received === ids.length * 2) finished();
    },
    { noAck: true },
  );
  const cpuBefore = cpuMilliseconds(consumer);
  const machineBefore = readMachineCpu();
  const started = performance.now();
  bench.phase(`sending ${ids.length * 2} messages to the baseline consumer`);
  const producers = await produce(url, '', input, ids, sentAt, false, () => undefined);
  bench.phase(`waiting for the baseline consumer's ${ids.length * 2} answers`);
  await done;
  const cpu = cpuMilliseconds(consumer) - cpuBefore;
  const machine = machineCpuPer(machineBefore, readMachineCpu(), ids.length * 2);
  const seconds = (performance.now() - started) / 1000;
  for (const connection of producers) await connection.close();
  await stopChild(consumer);
  await setup.close();
  latencies.sort((a, b) => a - b);
  return {
    perSecond: (ids.length * 2) / seconds,
    seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerCompletion: cpu / (ids.length * 2),
    machine,
  };
}

async function seedPorts(engines: Engines, rounds: number): Promise<string[][]> {
  const { prefix } = engines;
  const redis = engines.redis();
  const keys = new ProvisioningKeys(prefix);
  const source = { service: 'bench', instance: 'bench' };
  const ports = new PortStore(redis, keys, source);
  const records = new RecordStore(redis, keys);
  const agents = new AgentRegistry({
    redis,
    keys,
    records,
    logger,
    agentDownTimeSeconds: 75,
    enableNewAgents: true,
    startedAtMilliseconds: 0,
  });
  const provisioning = new PortProvisioning({
    ports,
    records,
    agents,
    source,
    logger,
    enableTraditionalDhcp: true,
    mechanismDrivers: Object.values(MECHANISM_DRIVERS),
  });
  await records.createNetwork({ id: 'net-1', name: 'bench', admin_state_up: true });
  await records.createSubnet({ id: 'subnet-1', network_id: 'net-1', cidr: '10.0.0.0/8', enable_dhcp: true });
  await agents.reportState(
    { agent_type: AGENT_TYPE_DHCP, binary: 'neutron-dhcp-agent', host: 'network-1', topic: 'dhcp_agent' },
    null,
  );
  await agents.reportState(
    {
      agent_type: AGENT_TYPE_OPEN_VSWITCH,
      binary: 'neutron-openvswitch-agent',
      host: 'compute-1',
      topic: 'N/A',
    },
    null,
  );
  await records.addDhcpAgentToNetwork('net-1', 'network-1');
  const ids = Array.from({ length: PORTS * rounds }, () => randomUUID());
  for (let start = 0; start < ids.length; start += 200) {
    await Promise.all(
      ids.slice(start, start + 200).map((id, offset) =>
        provisioning.create(
          Port.parse({
            id,
            network_id: 'net-1',
            mac_address: `fa:16:3e:${((start + offset) >> 16).toString(16).padStart(2, '0')}:${(((start + offset) >> 8) & 255).toString(16).padStart(2, '0')}:${((start + offset) & 255).toString(16).padStart(2, '0')}`,
            device_owner: 'compute:nova',
            device_id: randomUUID(),
            fixed_ips: [{ subnet_id: 'subnet-1' }],
            'binding:host_id': 'compute-1',
            'binding:vif_type': 'ovs',
          }),
        ),
      ),
    );
  }
  await redis.quit();
  return Array.from({ length: rounds }, (_, round) => ids.slice(round * PORTS, (round + 1) * PORTS));
}

async function lifeguard(
  engines: Engines,
  ids: string[],
  layout: 'service' | 'stack',
  floor = false,
): Promise<{ complete: Figures; active: Figures | null; replies: number; serviceMilliseconds: number }> {
  // `service`: the provisioning service alone (RPC server and outbox relay), which turns completions
  // into provisioning.complete events; `stack`: with the port-status subscriber as a second process,
  // as the stack runs them, which turns the events into ACTIVE ports.
  const { url, prefix } = engines;
  const roles = layout === 'service' ? ['service'] : ['service', 'port-status'];
  // Events a service-only phase left for the port-status subscriber are not this phase's work.
  const purger = await amqp.connect(url);
  purger.on('error', () => undefined);
  await purger
    .createChannel()
    .then((channel) => {
      channel.on('error', () => undefined);
      return channel.purgeQueue(QUEUES.provisioningComplete);
    })
    .catch(() => undefined);
  await purger.close().catch(() => undefined);
  // The traffic floor: one bare process that puts the same messages on the broker (traffic-floor.ts).
  const processes = floor
    ? [
        await startChild(
          'bench/provisioning/traffic-floor.ts',
          {
            BENCH_AMQP_URL: engines.url,
            BENCH_PREFETCH: String(PREFETCH),
            BENCH_QUORUM: engines.quorum ? '1' : '0',
            BENCH_FLOOR_LAYOUT: layout,
          },
          (line) => line === 'ready',
        ),
      ]
    : await Promise.all(
        roles.map((role) =>
          startChild(
            'packages/provisioning-blocks/src/main.ts',
            {
              LIFEGUARD_AMQP_URL: engines.serviceUrl,
              LIFEGUARD_REDIS_KEY_PREFIX: prefix,
              LIFEGUARD_HTTP_PORT: '0',
              LIFEGUARD_LOG_LEVEL: 'info',
              LIFEGUARD_INSTANCE_NAME: `bench-${role}`,
              LIFEGUARD_PROVISIONING_ROLE: role,
              LIFEGUARD_PROVISIONING_RPC_PREFETCH: String(PREFETCH),
              LIFEGUARD_PROVISIONING_PORT_STATUS_PREFETCH: String(PREFETCH),
              LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
              ...engines.environment,
            },
            'readyz',
          ),
        ),
      );
  const service = processes[0]!;
  const watcher = await amqp.connect(url);
  const channel = await watcher.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, EVENTS_EXCHANGE, 'provisioning.complete.port');
  await channel.bindQueue(queue, EVENTS_EXCHANGE, 'port.status.changed');
  const sentAt = new Map<string, number>();
  const toComplete: number[] = [];
  const toActive: number[] = [];
  let replies = 0;
  let lastComplete = 0;
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolveDone) => {
    finished = resolveDone;
  });
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      const event = JSON.parse(message.content.toString()) as {
        type: string;
        data: { objectId?: string; portId?: string; status?: string };
      };
      const now = performance.now();
      // Only this phase's ports count (sentAt holds them).
      const sent = sentAt.get(event.data.objectId ?? event.data.portId ?? '');
      if (sent === undefined) return;
      if (event.type === 'provisioning.complete') {
        toComplete.push(now - sent);
        lastComplete = now;
      } else if (event.data.status === 'ACTIVE') {
        toActive.push(now - sent);
      }
      if (toComplete.length >= ids.length && (layout === 'service' || toActive.length >= ids.length))
        finished();
    },
    { noAck: true },
  );
  const cpuBefore = processes.reduce((sum, each) => sum + cpuMilliseconds(each), 0);
  const machineBefore = readMachineCpu();
  const started = performance.now();
  bench.phase(
    `sending ${ids.length * 2} completions to the ${floor ? 'traffic floor' : 'provisioning service'} (${layout})`,
  );
  const producers = await produce(url, 'neutron', 'q-plugin', ids, sentAt, MODE === 'call', () => {
    replies++;
  });
  bench.phase(
    `waiting for ${ids.length} provisioning.complete${layout === 'stack' ? ' and port ACTIVE' : ''} events (${layout})`,
  );
  await done;
  const cpu = processes.reduce((sum, each) => sum + cpuMilliseconds(each), 0) - cpuBefore;
  const machine = machineCpuPer(machineBefore, readMachineCpu(), ids.length * 2);
  const activeAt = performance.now();
  for (const connection of producers) await connection.close();
  await watcher.close();
  const metrics = floor
    ? ''
    : await (await fetch(`http://127.0.0.1:${metricsPorts.get(service)}/metrics`)).text();
  const sum =
    /lifeguard_provisioning_rpc_duration_seconds_sum\{[^}]*method="update_device_up"[^}]*\} ([\d.e+-]+)/.exec(
      metrics,
    );
  const count =
    /lifeguard_provisioning_rpc_duration_seconds_count\{[^}]*method="update_device_up"[^}]*\} (\d+)/.exec(
      metrics,
    );
  const serviceMilliseconds = sum && count ? (Number(sum[1]) / Number(count[1])) * 1000 : Number.NaN;
  await Promise.all(processes.map((each) => stopChild(each)));
  toComplete.sort((a, b) => a - b);
  toActive.sort((a, b) => a - b);
  const completeSeconds = (lastComplete - started) / 1000;
  const activeSeconds = (activeAt - started) / 1000;
  return {
    complete: {
      cpuPerCompletion: cpu / (ids.length * 2),
      machine,
      perSecond: (ids.length * 2) / completeSeconds,
      seconds: completeSeconds,
      p50: percentile(toComplete, 0.5),
      p99: percentile(toComplete, 0.99),
    },
    active:
      layout === 'stack'
        ? {
            cpuPerCompletion: cpu / (ids.length * 2),
            machine,
            perSecond: (ids.length * 2) / activeSeconds,
            seconds: activeSeconds,
            p50: percentile(toActive, 0.5),
            p99: percentile(toActive, 0.99),
          }
        : null,
    replies,
    serviceMilliseconds,
  };
}

type Round = {
  base: Figures;
  /** The traffic floor of the service and of the stack (traffic-floor.ts). */
  floor: Figures;
  floorStack: Figures;
  ours: Awaited<ReturnType<typeof lifeguard>>;
  stack: Awaited<ReturnType<typeof lifeguard>>;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const row = (label: string, figures: Figures) =>
  `  ${label.padEnd(50)}${format(figures.perSecond, 0).padStart(14)}${format(figures.seconds).padStart(9)}${format(figures.p50).padStart(10)}${format(figures.p99).padStart(10)}${format(figures.cpuPerCompletion ?? Number.NaN, 3).padStart(10)}${format((figures.machine.machine * figures.perSecond) / 1000, 2).padStart(12)}\n`;
/** The three measurements of a round, with their labels in the tables. */
const MEASUREMENTS: Array<[label: string, pick: (round: Round) => Figures]> = [
  ['baseline (consume → confirmed publish → ack)', (round) => round.base],
  ['traffic floor: reply + event, no work', (round) => round.floor],
  ['service: completion → provisioning.complete', (round) => round.ours.complete],
  ['traffic floor: + port status event, no work', (round) => round.floorStack],
  ['+ port-status: completion → port ACTIVE', (round) => round.stack.active!],
];

/** Each figure's median over the rounds. */
function medianFigures(rounds: Round[], pick: (round: Round) => Figures): Figures {
  const figures = rounds.map(pick);
  return {
    perSecond: median(figures.map((each) => each.perSecond)),
    seconds: median(figures.map((each) => each.seconds)),
    p50: median(figures.map((each) => each.p50)),
    p99: median(figures.map((each) => each.p99)),
    cpuPerCompletion: median(figures.map((each) => each.cpuPerCompletion ?? Number.NaN)),
    machine: {
      machine: median(figures.map((each) => each.machine.machine)),
      broker: median(figures.map((each) => each.machine.broker)),
      redis: median(figures.map((each) => each.machine.redis)),
    },
  };
}

/** Seeds the ports, then runs ROUNDS rounds on `engines`, printing each round's rows as it ends. */
async function measure(engines: Engines): Promise<Round[]> {
  const seedStarted = performance.now();
  bench.phase(`seeding ${PORTS * ROUNDS * 2} ports`);
  const seeded = await seedPorts(engines, ROUNDS * 2);
  const rounds = Array.from({ length: ROUNDS }, (_, round) => [seeded[2 * round]!, seeded[2 * round + 1]!]);
  process.stdout.write(
    `  seeded ${(PORTS * ROUNDS * 2).toLocaleString('en-US')} ports with DHCP and L2 blocks in ${format((performance.now() - seedStarted) / 1000)} s\n`,
  );
  process.stdout.write(
    `\n  ${'round / measurement'.padEnd(50)}${'completions/s'.padStart(14)}${'seconds'.padStart(9)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'CPU ms'.padStart(10)}${'cores busy'.padStart(12)}\n`,
  );
  const results: Round[] = [];
  for (const [index, [serviceIds, stackIds]] of rounds.entries()) {
    const base = await baseline(engines, serviceIds!);
    const floor = (await lifeguard(engines, serviceIds!, 'service', true)).complete;
    const ours = await lifeguard(engines, serviceIds!, 'service');
    const floorStack = (await lifeguard(engines, stackIds!, 'stack', true)).active!;
    const stack = await lifeguard(engines, stackIds!, 'stack');
    const round: Round = { base, floor, floorStack, ours, stack };
    results.push(round);
    for (const [label, pick] of MEASUREMENTS)
      process.stdout.write(row(`${index + 1}: ${label}`, pick(round)));
    process.stdout.write(
      `     (service side: ${format(ours.serviceMilliseconds, 2)} ms per update_device_up from receipt to committed effect${MODE === 'call' ? `; ${(ours.replies + stack.replies).toLocaleString('en-US')} of ${(PORTS * 4).toLocaleString('en-US')} replies received` : ''}; load average ${loadAverage()})\n`,
    );
  }
  return results;
}

/** Issue 25's targets: lifeguard's completions per second as a share of the baseline's. */
const TARGETS = { complete: 0.8, active: 0.6 } as const;
/** `<figure> (target ≥ <target>): MET` or `NOT MET`. */
const judged = (value: number, target: number) =>
  `${value.toFixed(2)} (target ≥ ${target}): ${value >= target ? 'MET' : 'NOT MET'}`;

/** The medians over the rounds, the ratios lifeguard / baseline against their targets, and the costs side by side. */
function printMedians(results: Round[]): void {
  const baseRate = median(results.map((each) => each.base.perSecond));
  const ourRate = median(results.map((each) => each.ours.complete.perSecond));
  const activeRate = median(results.map((each) => each.stack.active!.perSecond));
  process.stdout.write('\n  medians over the rounds\n');
  for (const [label, pick] of MEASUREMENTS) process.stdout.write(row(label, medianFigures(results, pick)));
  const perRound = (pick: (round: Round) => number) =>
    results.map((each) => (pick(each) / each.base.perSecond).toFixed(2)).join(', ');
  const floorRate = median(results.map((each) => each.floor.perSecond));
  const floorStackRate = median(results.map((each) => each.floorStack.perSecond));
  process.stdout.write(
    `\n  ratio lifeguard / baseline (median completions/s to provisioning.complete): ${judged(ourRate / baseRate, TARGETS.complete)}; per round: ${perRound((each) => each.ours.complete.perSecond)}\n` +
      `  ratio end to end, to port ACTIVE: ${judged(activeRate / baseRate, TARGETS.active)}; per round: ${perRound((each) => each.stack.active!.perSecond)}\n` +
      `  ceiling on this machine, the traffic floor / baseline: ${(floorRate / baseRate).toFixed(2)} to provisioning.complete (per round: ${perRound((each) => each.floor.perSecond)}), ${(floorStackRate / baseRate).toFixed(2)} to port ACTIVE (per round: ${perRound((each) => each.floorStack.perSecond)})\n` +
      `  lifeguard / traffic floor: ${(ourRate / floorRate).toFixed(2)} to provisioning.complete, ${(activeRate / floorStackRate).toFixed(2)} to port ACTIVE\n` +
      '  (the traffic floor puts the same replies and events on the broker and does nothing else: no rate of a service can pass it here, so floor / baseline is the ceiling of the ratios on this machine)\n' +
      (SMOKE
        ? '  smoke run: a fraction of a second per measurement, too short for these ratios to mean anything; the targets are for the full run\n'
        : ''),
  );
  const [base, floor, service, floorStack, stack] = MEASUREMENTS.map(([, pick]) =>
    medianFigures(results, pick),
  ) as [Figures, Figures, Figures, Figures, Figures];
  const columns: Array<[heading: string, figures: Figures]> = [
    ['service', service],
    ['baseline', base],
    ['floor', floor],
    ['+ port-status', stack],
    ['floor (stack)', floorStack],
  ];
  const side = (name: string, figure: (figures: Figures) => number, digits: number) =>
    `  ${name.padEnd(44)}${columns.map(([, figures]) => format(figure(figures), digits).padStart(15)).join('')}\n`;
  process.stdout.write(
    `\n  ${'medians: lifeguard beside the baseline'.padEnd(44)}${columns.map(([heading]) => heading.padStart(15)).join('')}\n` +
      side(
        'CPU ms per completion (measured process)',
        (figures) => figures.cpuPerCompletion ?? Number.NaN,
        3,
      ) +
      side('  RabbitMQ CPU ms per completion', (figures) => figures.machine.broker, 3) +
      side('  Redis CPU ms per completion', (figures) => figures.machine.redis, 3) +
      side('  machine CPU ms per completion (all cores)', (figures) => figures.machine.machine, 3) +
      side('p50 latency, ms', (figures) => figures.p50, 1) +
      side('p99 latency, ms', (figures) => figures.p99, 1) +
      `  (service: to provisioning.complete; + port-status: to port ACTIVE, CPU of both processes; floor: the traffic floor, traffic-floor.ts; load average at the end: ${loadAverage()})\n`,
  );
}

/** The 1-, 5- and 15-minute load averages (Linux /proc/loadavg), or "unknown". */
function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}

/** Cluster mode: every median on the single engines and on the clusters, and cluster / single. */
function printComparison(single: Round[], cluster: Round[]): void {
  const metrics: Array<[name: string, pick: (figures: Figures) => number, digits: number]> = [
    ['completions/s', (figures) => figures.perSecond, 0],
    ['p50 ms', (figures) => figures.p50, 1],
    ['p99 ms', (figures) => figures.p99, 1],
    ['CPU ms per completion', (figures) => figures.cpuPerCompletion ?? Number.NaN, 3],
  ];
  process.stdout.write(
    `\n  cluster / single (medians over the rounds)\n  ${'measurement: figure'.padEnd(70)}${'single'.padStart(10)}${'cluster'.padStart(10)}${'cluster / single'.padStart(18)}\n`,
  );
  for (const [label, pick] of MEASUREMENTS) {
    const [one, three] = [medianFigures(single, pick), medianFigures(cluster, pick)];
    for (const [name, figure, digits] of metrics) {
      process.stdout.write(
        `  ${`${label}: ${name}`.padEnd(70)}${format(figure(one), digits).padStart(10)}${format(figure(three), digits).padStart(10)}${(figure(three) / figure(one)).toFixed(2).padStart(18)}\n`,
      );
    }
  }
  const ratio = (rounds: Round[]) =>
    median(rounds.map((each) => each.ours.complete.perSecond)) /
    median(rounds.map((each) => each.base.perSecond));
  process.stdout.write(
    `  ${'ratio lifeguard / baseline (completions/s to provisioning.complete)'.padEnd(70)}${ratio(single).toFixed(2).padStart(10)}${ratio(cluster).toFixed(2).padStart(10)}\n`,
  );
}

/** Cluster mode's second part: starts the clusters, measures on them, prints the comparison. */
async function measureOnClusters(single: Round[]): Promise<void> {
  const clusters = await startClusterEngines(bench, 'bench-provisioning');
  const prefix = `{${randomKeyPrefix('bench-pb')}}`;
  process.stdout.write(`\n  on the clusters: ${clusters.description}; Redis keys ${prefix}:*\n`);
  const results = await measure({
    serviceUrl: clusters.amqpUrls,
    url: clusters.amqpUrl,
    prefix,
    redis: () => clusters.redis(),
    environment: {
      LIFEGUARD_REDIS_CLUSTER_NODES: clusters.redisNodes,
      // With cluster nodes the URL gives only credentials and TLS (none here), and database 0.
      LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:6379/0',
      LIFEGUARD_PROVISIONING_RPC_QUORUM_QUEUE: 'true',
    },
    quorum: true,
  });
  printMedians(results);
  printComparison(single, results);
}

bench.phase('creating a vhost');
const [vhost, deleteVhost] = await bench.acquire(
  'the vhost',
  () => createTestVhost('bench-provisioning'),
  (created) => created.delete(),
);
const prefix = randomKeyPrefix('bench-pb');
const deleteKeys = bench.resource(`Redis keys ${prefix}:*`, async () => {
  const redis = testRedis();
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
});
await bench.run(async () => {
  process.stdout.write(
    `provisioning-blocks: ${SMOKE ? 'smoke run, ' : ''}${PORTS.toLocaleString('en-US')} ports × 2 blocks per round, ${ROUNDS} rounds, oslo ${MODE}s over AMQP, prefetch ${PREFETCH}\n` +
      '  each round measures the baseline and then lifeguard, so both see the same background load\n' +
      `  on vhost ${vhost.name} and Redis keys ${prefix}:* (removed at the end, on SIGINT, SIGTERM and the time limit)\n`,
  );
  if (CLUSTER)
    process.stdout.write(
      '  cluster mode: first on the single RabbitMQ and Redis, then on a 3-node RabbitMQ cluster (quorum queues) and a Redis Cluster started here\n\n  on the single engines\n',
    );
  const single = await measure({
    serviceUrl: vhost.url,
    url: vhost.url,
    prefix,
    redis: () => testRedis(),
    environment: {},
    quorum: false,
  });
  printMedians(single);
  process.stdout.write(
    '  for scale: Neutron’s own module on MariaDB here did about 500 completions/s in one process, before any RPC\n',
  );
  await deleteKeys();
  await deleteVhost();
  if (CLUSTER) await measureOnClusters(single);
});
