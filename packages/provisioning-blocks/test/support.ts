import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach } from 'node:test';
import {
  EVENTS_EXCHANGE,
  encodeOsloBody,
  type LifeguardEvent,
  OSLO_MESSAGE_PROPERTIES,
  Port,
} from '@lifeguard/contracts';
import {
  AmqpClient,
  createLogger,
  declareEventsTopology,
  environmentSource,
  type ServiceContext,
  startService,
} from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { loadProvisioningConfiguration } from '../src/configuration.ts';
import { AgentCallbacks } from '../src/ml2/agent-callbacks.ts';
import { MECHANISM_DRIVERS } from '../src/ml2/ml2-rules.ts';
import { PortProvisioning } from '../src/ml2/port-provisioning.ts';
import { type Provisioning, type StartProvisioningOptions, startProvisioning } from '../src/service.ts';
import { PortStatusSubscriber } from '../src/status/port-status-subscriber.ts';
import { AgentRegistry } from '../src/store/agent-registry.ts';
import { BlockStore } from '../src/store/block-store.ts';
import { type OutboxEntry, toOutboxEntry } from '../src/store/outbox-relay.ts';
import { PortStore } from '../src/store/port-store.ts';
import { ProvisioningKeys } from '../src/store/provisioning-keys.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { ServiceProcess } from './service-process.ts';

export const SOURCE = { service: 'provisioning-blocks', instance: 'test:1' };

/** Stores a port record directly (no ML2 rules), with defaults for every field not given. */
export async function storePort(ports: PortStore, fields: Partial<Port> & { id: string }): Promise<void> {
  const port = Port.parse({ network_id: 'net-1', ...fields });
  const result = await ports.write(
    port.id,
    null,
    port,
    { previous: port.mac_address, current: port.mac_address },
    [],
    null,
  );
  if (result.status !== 'ok') throw new Error(`storePort ${port.id}: ${result.status}`);
}

/** Every entry in the outbox stream, oldest first, with its event parsed. */
export async function outboxEvents(
  redis: Redis,
  keys: ProvisioningKeys,
): Promise<Array<OutboxEntry & { parsed: LifeguardEvent }>> {
  const entries = await redis.xrange(keys.outbox, '-', '+');
  return entries.map(([streamId, fields]) => {
    const entry = toOutboxEntry(streamId, fields);
    if ('unpublishable' in entry)
      throw new Error(`outbox entry ${streamId} unpublishable: ${entry.unpublishable}`);
    return { ...entry, parsed: JSON.parse(entry.event) as LifeguardEvent };
  });
}

// ---------------------------------------------------------------------------------------------
// Running the service in-process, seeding records, and watching the events it publishes.
// ---------------------------------------------------------------------------------------------

export const testLogger = createLogger({ service: 'test', level: 'silent' });

/** An AMQP client of service `test` (silent log) on `amqpUrl`, its connection named `connectionName`. */
export function connectTestAmqp(amqpUrl: string, connectionName: string): Promise<AmqpClient> {
  return AmqpClient.connect({ url: amqpUrl, connectionName, service: 'test', logger: testLogger });
}

/** Deletes every key under each of `prefixes` through a Redis client of its own, closed after. */
export async function deleteTestKeys(prefixes: Iterable<string>): Promise<void> {
  const redis = testRedis();
  try {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
  } finally {
    await redis.quit();
  }
}

export const DHCP_HOST = 'network-1';
export const COMPUTE_HOST = 'compute-1';
export const NETWORK_ID = 'net-1';
export const SUBNET_ID = 'subnet-1';

/** A provisioning service started in this process on a test vhost and key prefix. */
export interface TestService {
  readonly context: ServiceContext;
  readonly provisioning: Provisioning;
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

export async function startTestService(
  amqpUrl: string,
  prefix: string,
  overrides: Record<string, string> = {},
  options: StartProvisioningOptions = {},
): Promise<TestService> {
  const env: Record<string, string> = {
    LIFEGUARD_AMQP_URL: amqpUrl,
    LIFEGUARD_REDIS_URL: REDIS_URL,
    LIFEGUARD_REDIS_KEY_PREFIX: prefix,
    LIFEGUARD_HTTP_PORT: '0',
    LIFEGUARD_LOG_LEVEL: 'silent',
    LIFEGUARD_PROVISIONING_RPC_SERVER: 'lifeguard-test',
    LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
    ...overrides,
  };
  const context = await startService({ service: 'provisioning-blocks', defaultHttpPort: 0, env });
  const provisioning = await startProvisioning(
    context,
    loadProvisioningConfiguration([environmentSource(env)]),
    { compute: null, ...options },
  );
  return {
    context,
    provisioning,
    env,
    async close() {
      await provisioning.stop();
      await context.amqp.close();
      await context.redis.quit().catch(() => context.redis.disconnect());
      await context.admin.stop();
    },
  };
}

/**
 * A network with a DHCP-enabled subnet, a DHCP agent hosting it (on DHCP_HOST) and an Open vSwitch
 * agent on COMPUTE_HOST: ports created there get a DHCP and an L2 block.
 */
export async function seedNetwork(provisioning: Pick<Provisioning, 'records' | 'agents'>): Promise<void> {
  await provisioning.records.createNetwork({ id: NETWORK_ID, name: 'private', admin_state_up: true });
  await provisioning.records.createSubnet({
    id: SUBNET_ID,
    network_id: NETWORK_ID,
    cidr: '10.0.0.0/16',
    enable_dhcp: true,
  });
  await provisioning.agents.reportState(
    { agent_type: 'DHCP agent', binary: 'neutron-dhcp-agent', host: DHCP_HOST, topic: 'dhcp_agent' },
    null,
  );
  await provisioning.agents.reportState(
    {
      agent_type: 'Open vSwitch agent',
      binary: 'neutron-openvswitch-agent',
      host: COMPUTE_HOST,
      topic: 'N/A',
    },
    null,
  );
  const bound = await provisioning.records.addDhcpAgentToNetwork(NETWORK_ID, DHCP_HOST);
  if (bound !== 'ok') throw new Error(`seedNetwork: ${bound}`);
}

/**
 * A deterministic UUID-like id for test port `index` of `group`, unique in its first 8 characters
 * (agents' tap names carry only the first 11): `<group 2 digits><index 6 digits>-0000-4000-8000-<index>`.
 */
export function portUuid(index: number, group = 0): string {
  return `${String(group).padStart(2, '0')}${String(index).padStart(6, '0')}-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

/** A compute port bound (vif_type ovs) on COMPUTE_HOST in the seeded network. */
export function computePort(id: string, overrides: Partial<Port> = {}): Port {
  return Port.parse({
    id,
    network_id: NETWORK_ID,
    mac_address: `fa:16:3e:${id.slice(-6, -4)}:${id.slice(-4, -2)}:${id.slice(-2)}`,
    device_owner: 'compute:nova',
    device_id: `aaaaaaaa-0000-4000-8000-${id.slice(-12)}`,
    fixed_ips: [{ subnet_id: SUBNET_ID, ip_address: '10.0.0.10' }],
    'binding:host_id': COMPUTE_HOST,
    'binding:vif_type': 'ovs',
    ...overrides,
  });
}

/** Collects every event published to the events exchange of a vhost. */
export class EventCollector {
  readonly events: Array<{ event: LifeguardEvent; messageId: string; routingKey: string }> = [];
  private constructor(private readonly amqp: AmqpClient) {}

  static async start(amqpUrl: string, name: string, bindings: string[] = ['#']): Promise<EventCollector> {
    const amqp = await connectTestAmqp(amqpUrl, name);
    const collector = new EventCollector(amqp);
    await amqp.declare(async (channel) => {
      await declareEventsTopology(channel);
      await channel.assertQueue(name, { durable: false });
      for (const binding of bindings) await channel.bindQueue(name, EVENTS_EXCHANGE, binding);
    });
    await amqp.consume({
      queue: name,
      prefetch: 1000,
      contract: 'event',
      handler: async (body, message) => {
        collector.events.push({
          event: body as LifeguardEvent,
          messageId: String(message.properties.messageId),
          routingKey: message.fields.routingKey,
        });
      },
    });
    return collector;
  }

  of<Type extends LifeguardEvent['type']>(type: Type): Array<Extract<LifeguardEvent, { type: Type }>> {
    return this.events.filter((each) => each.event.type === type).map((each) => each.event) as Array<
      Extract<LifeguardEvent, { type: Type }>
    >;
  }

  close(): Promise<void> {
    return this.amqp.close();
  }
}

/**
 * Runs the oslo.messaging agent helper (oslo_agent.py) with /usr/bin/python3 and returns its outcomes.
 * @param timeoutMilliseconds the helper is killed after this long (default 120 s)
 */
export function runOsloAgent(
  spec: Record<string, unknown>,
  timeoutMilliseconds = 120_000,
): Promise<OsloOutcome[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      '/usr/bin/python3',
      [new URL('./oslo_agent.py', import.meta.url).pathname],
      { timeout: timeoutMilliseconds, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`oslo_agent.py failed: ${error.message}\n${stderr}`));
          return;
        }
        resolve(JSON.parse(stdout) as OsloOutcome[]);
      },
    );
    child.stdin?.end(JSON.stringify(spec));
  });
}

export interface OsloOutcome {
  ok: boolean;
  /** How many times the call was made (a MessagingTimeout is retried up to the operation's `retries`). */
  attempts?: number;
  result?: unknown;
  error?: string;
  module?: string;
  exc_type?: string | null;
  message?: string;
}

/** The oslo transport URL of an amqp:// vhost URL. */
export function rabbitUrl(amqpUrl: string): string {
  return amqpUrl.replace(/^amqp:/, 'rabbit:');
}

/** The stores and ML2 logic on a fresh key prefix, without any AMQP (for rule tests). */
export function createStores(
  redis: Redis,
  prefix: string,
  options: { enableTraditionalDhcp?: boolean; now?: () => number } = {},
) {
  const keys = new ProvisioningKeys(prefix);
  const blocks = new BlockStore(redis, keys, SOURCE);
  const ports = new PortStore(redis, keys, SOURCE);
  const records = new RecordStore(redis, keys);
  const agents = new AgentRegistry({
    redis,
    keys,
    records,
    logger: testLogger,
    agentDownTimeSeconds: 75,
    enableNewAgents: true,
    startedAtMilliseconds: 0,
    ...(options.now ? { now: options.now } : {}),
  });
  const portProvisioning = new PortProvisioning({
    ports,
    records,
    agents,
    source: SOURCE,
    logger: testLogger,
    enableTraditionalDhcp: options.enableTraditionalDhcp ?? true,
    mechanismDrivers: Object.values(MECHANISM_DRIVERS),
  });
  const callbacks = new AgentCallbacks({
    redis,
    keys,
    blocks,
    ports,
    agents,
    source: SOURCE,
    logger: testLogger,
  });
  return { keys, blocks, ports, records, agents, portProvisioning, callbacks };
}
export type Stores = ReturnType<typeof createStores>;

/** Creates `count` compute ports with a DHCP and an L2 block each (group `group`), 100 at a time. */
export async function createBlockedPorts(stores: Stores, count: number, group: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, index) => portUuid(index, group));
  for (let start = 0; start < ids.length; start += 100) {
    await Promise.all(
      ids.slice(start, start + 100).map((id) => stores.portProvisioning.create(computePort(id))),
    );
  }
  return ids;
}

/**
 * Sends, for every port, `dhcp_ready_on_ports` on one AMQP connection and `update_device_up` on
 * another at the same instant (oslo casts on the plugin topic), `chunk` ports at a time.
 */
export async function completeFromTwoConnections(
  amqpUrl: string,
  ids: ReadonlyArray<string>,
  options: { chunk?: number; beforeChunk?: (sent: number) => Promise<void> } = {},
): Promise<void> {
  const [dhcpAgent, l2Agent] = await Promise.all([
    connectTestAmqp(amqpUrl, 'agent-dhcp'),
    connectTestAmqp(amqpUrl, 'agent-l2'),
  ]);
  const cast = (client: AmqpClient, method: string, args: Record<string, unknown>, version: string) =>
    client.publish(
      'neutron',
      'q-plugin',
      Buffer.from(
        encodeOsloBody({
          method,
          args,
          version,
          _unique_id: randomUUID().replaceAll('-', ''),
          _context_request_id: `req-${randomUUID()}`,
        }),
      ),
      { ...OSLO_MESSAGE_PROPERTIES, mandatory: true },
    );
  try {
    const chunk = options.chunk ?? 100;
    for (let start = 0; start < ids.length; start += chunk) {
      await options.beforeChunk?.(start);
      await Promise.all(
        ids
          .slice(start, start + chunk)
          .flatMap((id) => [
            cast(dhcpAgent, 'dhcp_ready_on_ports', { port_ids: [id] }, '1.5'),
            cast(
              l2Agent,
              'update_device_up',
              { device: id, agent_id: 'ovs-agent-compute-1', host: COMPUTE_HOST },
              '1.9',
            ),
          ]),
      );
    }
  } finally {
    await Promise.all([dhcpAgent.close(), l2Agent.close()]);
  }
}

/** Creates stores on `prefix`, seeds the network (seedNetwork) and `count` blocked ports (createBlockedPorts). */
export async function seedBlockedPorts(
  redis: Redis,
  prefix: string,
  count: number,
  group: number,
): Promise<{ stores: Stores; ids: string[] }> {
  const stores = createStores(redis, prefix);
  await seedNetwork(stores);
  return { stores, ids: await createBlockedPorts(stores, count, group) };
}

/**
 * Waits (up to 60 seconds, polling every 200 milliseconds) until every port in `ids` has status ACTIVE.
 * @throws Error naming `what` when the time runs out
 */
export async function waitForEveryPortActive(
  what: string,
  redis: Redis,
  stores: Stores,
  ids: ReadonlyArray<string>,
): Promise<void> {
  await waitFor(
    what,
    async () => {
      const statuses = await Promise.all(ids.map((id) => redis.hget(stores.keys.port(id), 'status')));
      return statuses.every((status) => status === '"ACTIVE"');
    },
    60_000,
    200,
  );
}

/**
 * Registers hooks on the enclosing `describe`: one Redis client for the suite; before each test, stores
 * on a fresh key prefix (randomKeyPrefix(`label`)) with the network seeded (seedNetwork), handed to
 * `use`; after the suite, every prefix deleted and the client closed.
 */
export function seedStoresBeforeEachTest(
  label: string,
  use: (fresh: { redis: Redis; stores: Stores }) => void,
  options: Parameters<typeof createStores>[2] = {},
): void {
  let redis: Redis;
  const prefixes: string[] = [];
  before(() => {
    redis = testRedis();
  });
  beforeEach(async () => {
    const prefix = randomKeyPrefix(label);
    prefixes.push(prefix);
    const stores = createStores(redis, prefix, options);
    await seedNetwork(stores);
    use({ redis, stores });
  });
  after(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });
}

/**
 * A port-status subscriber on `ports` for calling `handle()` directly: its AMQP side is absent (the
 * consumer is tested end to end elsewhere); handled events are remembered 60 seconds.
 */
export function portStatusSubscriberWithoutAmqp(
  ports: PortStore,
  options: Partial<ConstructorParameters<typeof PortStatusSubscriber>[0]> = {},
): PortStatusSubscriber {
  return new PortStatusSubscriber({
    amqp: null as never,
    ports,
    logger: testLogger,
    handledTtlSeconds: 60,
    prefetch: 1,
    ...options,
  });
}

/** A RabbitMQ vhost and a Redis client shared by one suite, with the processes and key prefixes it made. */
export interface ServiceProcessSuite {
  readonly vhost: TestVhost;
  readonly redis: Redis;
  /** A fresh key prefix (randomKeyPrefix(`label`)), deleted after the suite. */
  keyPrefix(label: string): string;
  /** Starts a ServiceProcess (ServiceProcess.start(`env`)), killed after the suite if still running. */
  start(env: Record<string, string>): ServiceProcess;
}

/**
 * Registers hooks on the enclosing `describe`: before it, a test vhost (createTestVhost(`vhostName`))
 * and a Redis client; after it, every process started through the suite killed, every key prefix it
 * handed out deleted, the client closed and the vhost deleted.
 */
export function serviceProcessSuite(vhostName: string): ServiceProcessSuite {
  let vhost: TestVhost | undefined;
  let redis: Redis | undefined;
  const prefixes: string[] = [];
  const processes: ServiceProcess[] = [];
  const ready = <Value>(value: Value | undefined): Value => {
    if (value === undefined) throw new Error('serviceProcessSuite: used before its before() hook ran');
    return value;
  };
  before(async () => {
    vhost = await createTestVhost(vhostName);
    redis = testRedis();
  });
  after(async () => {
    for (const service of processes) await service.kill();
    for (const prefix of prefixes) await deleteKeysWithPrefix(ready(redis), prefix);
    await ready(redis).quit();
    await ready(vhost).delete();
  });
  return {
    get vhost() {
      return ready(vhost);
    },
    get redis() {
      return ready(redis);
    },
    keyPrefix(label) {
      const prefix = randomKeyPrefix(label);
      prefixes.push(prefix);
      return prefix;
    },
    start(env) {
      const service = ServiceProcess.start(env);
      processes.push(service);
      return service;
    },
  };
}
