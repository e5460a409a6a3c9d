// The fault suite's own RabbitMQ and Redis: `npm run test:faults` starts them before the first test
// file (scripts/fault-engines.mjs runs `suite-engines-command.ts start`) and stops them after the last,
// also when the run fails or is interrupted, by the process group ids written in the state file. They
// listen on other loopback ports than the shared 5672/6379 and keep their data under a folder of their
// own, so a test that kills, restarts or fills them never disturbs the shared brokers or another
// engineer's tests.
//
// Environment the runner sets for every test file (so every helper of @lifeguard/testing —
// createTestVhost, RABBITMQ, REDIS_URL, testRedis, closeConnectionByName — points at these engines):
//   LIFEGUARD_FAULT_ENGINES_FILE           this state file (JSON, SuiteEngines below); restarts update it
//   LIFEGUARD_TEST_AMQP_PORT               the private node's AMQP port on 127.0.0.1
//   LIFEGUARD_TEST_RABBITMQ_MANAGEMENT_URL its management API, http://127.0.0.1:<port>
//   LIFEGUARD_TEST_RABBITMQ_NODE           its Erlang node name (rabbitmqctl -n)
//   LIFEGUARD_TEST_RABBITMQ_HOME           the HOME holding its Erlang cookie (for rabbitmqctl)
//   LIFEGUARD_TEST_REDIS_URL               redis://127.0.0.1:<port>/0, append-only persistence on
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  closedPort,
  type PrivateRabbitmqNode,
  privateRabbitmqEnvironment,
  startDetachedRedis,
  startPrivateRabbitmq,
  stopProcessGroup,
} from '@lifeguard/testing';
import { Redis } from 'ioredis';

/** What the state file holds: how each engine runs and the process group id of the running one. */
export interface SuiteEngines {
  /** The folder holding both engines' data; removed when the suite stops them. */
  readonly directory: string;
  readonly rabbitmq: {
    readonly node: PrivateRabbitmqNode;
    readonly amqpPort: number;
    readonly managementPort: number;
    /** Process group id (= pid of rabbitmq-server) of the running node. */
    readonly pid: number;
  };
  readonly redis: {
    readonly port: number;
    readonly directory: string;
    /** Process group id (= pid) of the running redis-server. */
    readonly pid: number;
  };
}

const STATE_VARIABLE = 'LIFEGUARD_FAULT_ENGINES_FILE';

function stateFile(): string {
  const file = process.env[STATE_VARIABLE];
  if (!file) {
    throw new Error(
      `${STATE_VARIABLE} is not set: fault tests run on the suite's own brokers, started by npm run test:faults`,
    );
  }
  return file;
}

/** The suite's engines as the state file describes them now. */
export function readSuiteEngines(): SuiteEngines {
  return JSON.parse(readFileSync(stateFile(), 'utf8')) as SuiteEngines;
}

function writeSuiteEngines(engines: SuiteEngines): void {
  writeFileSync(stateFile(), `${JSON.stringify(engines, null, 2)}\n`);
}

/** The environment variables (listed in this file's header) that point the tests at `engines`. */
export function suiteEnginesEnvironment(engines: SuiteEngines): Record<string, string> {
  return {
    LIFEGUARD_TEST_AMQP_PORT: String(engines.rabbitmq.amqpPort),
    LIFEGUARD_TEST_RABBITMQ_MANAGEMENT_URL: `http://127.0.0.1:${engines.rabbitmq.managementPort}`,
    LIFEGUARD_TEST_RABBITMQ_NODE: engines.rabbitmq.node.nodeName,
    LIFEGUARD_TEST_RABBITMQ_HOME: privateRabbitmqEnvironment(engines.rabbitmq.node).HOME!,
    LIFEGUARD_TEST_REDIS_URL: `redis://127.0.0.1:${engines.redis.port}/0`,
  };
}

/** True once the node's management API answers /api/overview for guest (the broker is fully up). */
async function managementAnswers(managementPort: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${managementPort}/api/overview`, {
    headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
  });
  return response.ok;
}

/** Process group ids spawned so far by startSuiteEngines, written before they are ready (see the runner's stop). */
type SpawnedPids = { rabbitmq?: { pid: number }; redis?: { pid: number } };

function startRabbitmq(
  engines: Pick<SuiteEngines, 'rabbitmq'>,
  onSpawn?: (pid: number) => void,
): Promise<number> {
  return startPrivateRabbitmq(
    engines.rabbitmq.node,
    () => managementAnswers(engines.rabbitmq.managementPort),
    600_000,
    onSpawn,
  );
}

function startRedis(redis: SuiteEngines['redis'], onSpawn?: (pid: number) => void): Promise<number> {
  return startDetachedRedis(
    { port: redis.port, directory: redis.directory, appendOnly: true },
    120_000,
    onSpawn,
  );
}

/**
 * Starts both engines under `directory` on free loopback ports, writes the state file
 * (LIFEGUARD_FAULT_ENGINES_FILE) and returns what it wrote. RabbitMQ: node `lgfaults<port>@localhost`,
 * AMQP on 127.0.0.1 only, the management plugin on its own port, guest/guest, a random Erlang cookie
 * in its own HOME. Redis: append-only persistence (`appendfsync everysec`), `noeviction`, as the
 * Compose deployment runs it.
 * @throws Error when either does not come up (what did come up is stopped first)
 */
export async function startSuiteEngines(directory: string): Promise<SuiteEngines> {
  const amqpPort = await closedPort();
  const managementPort = await closedPort();
  const node: PrivateRabbitmqNode = {
    nodeName: `lgfaults${amqpPort}@localhost`,
    directory: join(directory, 'rabbitmq'),
    nodePort: amqpPort,
    distributionPort: await closedPort(),
    configLines: [
      `listeners.tcp.default = 127.0.0.1:${amqpPort}`,
      'management.tcp.ip = 127.0.0.1',
      `management.tcp.port = ${managementPort}`,
    ],
    plugins: ['rabbitmq_management'],
  };
  const home = privateRabbitmqEnvironment(node).HOME!;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, '.erlang.cookie'), randomBytes(20).toString('hex').toUpperCase());
  chmodSync(join(home, '.erlang.cookie'), 0o400);
  const redis = { port: await closedPort(), directory: join(directory, 'redis'), pid: 0 };
  // Each engine's group id is in the state file from the moment it is spawned, so that the runner
  // stops it even when this start is cut short.
  const spawned: SpawnedPids = {};
  const note = (engine: keyof SpawnedPids) => (pid: number) => {
    spawned[engine] = { pid };
    writeFileSync(stateFile(), `${JSON.stringify(spawned)}\n`);
  };
  const rabbitmqPid = await startRabbitmq(
    { rabbitmq: { node, amqpPort, managementPort, pid: 0 } },
    note('rabbitmq'),
  );
  try {
    redis.pid = await startRedis(redis, note('redis'));
  } catch (error) {
    await stopProcessGroup(rabbitmqPid);
    throw error;
  }
  const engines: SuiteEngines = {
    directory,
    rabbitmq: { node, amqpPort, managementPort, pid: rabbitmqPid },
    redis,
  };
  writeSuiteEngines(engines);
  return engines;
}

/** When an engine went down and when it answered again (milliseconds since the epoch). */
export interface EngineRestart {
  readonly stoppedAt: number;
  readonly answeringAt: number;
}

/**
 * Restarts the suite's RabbitMQ node on the same data folder (durable and quorum queues and their
 * confirmed messages come back): `how` 'stop' (the default) runs `rabbitmqctl stop`, as an operator's
 * restart or an upgrade does (clients get connection.close 320 CONNECTION_FORCED); 'kill' sends
 * SIGKILL to its process group (a crash: clients see their sockets die). Seen with Debian's RabbitMQ
 * 3.10 here: a quorum queue declared a few seconds before a SIGKILL came back with an empty Raft log
 * and never elected a leader, so 'kill' tests must give the queues time to settle first. The node
 * stays down `downMilliseconds` before it is started again.
 * @returns when it went down and when its management API answered again
 */
export async function restartSuiteRabbitmq(
  options: { how?: 'kill' | 'stop'; downMilliseconds?: number } = {},
): Promise<EngineRestart> {
  const engines = readSuiteEngines();
  const { node } = engines.rabbitmq;
  if (options.how !== 'kill') {
    execFileSync('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-n', node.nodeName, 'stop'], {
      env: { ...process.env, ...privateRabbitmqEnvironment(node) },
      stdio: 'ignore',
      timeout: 120_000,
    });
  }
  await stopProcessGroup(engines.rabbitmq.pid);
  const stoppedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, options.downMilliseconds ?? 0));
  const pid = await startRabbitmq(engines);
  const answeringAt = Date.now();
  writeSuiteEngines({ ...engines, rabbitmq: { ...engines.rabbitmq, pid } });
  return { stoppedAt, answeringAt };
}

/**
 * Restarts the suite's Redis. `persistence` 'append-only': on the same data folder, so it replays its
 * append-only file and comes back with every write it acknowledged; 'none': its data folder emptied
 * first, so it comes back empty, as a Redis without persistence does (it keeps append-only on from
 * then). `how` 'kill' sends SIGKILL (a crash), 'shutdown' sends SHUTDOWN NOSAVE. Settings made with
 * CONFIG SET (maxmemory, ...) are gone after it. The server stays down `downMilliseconds`.
 * @returns when it went down and when it answered PING again (after loading its data)
 */
export async function restartSuiteRedis(options: {
  persistence: 'append-only' | 'none';
  how?: 'kill' | 'shutdown';
  downMilliseconds?: number;
}): Promise<EngineRestart> {
  const engines = readSuiteEngines();
  if (options.how === 'shutdown') {
    const client = suiteRedisClient();
    await client.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
    client.disconnect();
  }
  await stopProcessGroup(engines.redis.pid);
  const stoppedAt = Date.now();
  if (options.persistence === 'none') rmSync(engines.redis.directory, { recursive: true, force: true });
  await new Promise((resolve) => setTimeout(resolve, options.downMilliseconds ?? 0));
  const pid = await startRedis(engines.redis);
  const answeringAt = Date.now();
  writeSuiteEngines({ ...engines, redis: { ...engines.redis, pid } });
  return { stoppedAt, answeringAt };
}

/** A Redis connection to the suite's Redis that gives up at once when it is down (one per call). */
function suiteRedisClient(): Redis {
  const client = new Redis({
    port: readSuiteEngines().redis.port,
    host: '127.0.0.1',
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  return client;
}

/**
 * Sets the suite Redis's `maxmemory` (CONFIG SET; the policy stays `noeviction`, so once used memory
 * is above it every write is refused with OOM and nothing is evicted).
 * @param bytes the limit in bytes; null removes it (0, no limit)
 * @returns used_memory in bytes at the moment the limit was set
 */
export async function setRedisMaxMemory(bytes: number | null): Promise<number> {
  const client = suiteRedisClient();
  try {
    await client.config('SET', 'maxmemory', String(bytes ?? 0));
    const info = await client.info('memory');
    return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
  } finally {
    client.disconnect();
  }
}
