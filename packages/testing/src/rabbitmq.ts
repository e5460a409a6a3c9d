import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { DEAD_LETTER_HEADERS, DEAD_LETTER_QUEUE } from '@lifeguard/contracts';
import type { Channel } from 'amqplib';

const execute = promisify(execFile);

/**
 * Runs rabbitmqctl against the tests' RabbitMQ: the machine's node (Debian's `rabbitmqctl` wrapper),
 * or, when LIFEGUARD_TEST_RABBITMQ_NODE and LIFEGUARD_TEST_RABBITMQ_HOME are set (the fault suite's
 * private node), that node with the Erlang cookie in that HOME.
 */
function rabbitmqctl(args: ReadonlyArray<string>): Promise<{ stdout: string }> {
  const node = process.env.LIFEGUARD_TEST_RABBITMQ_NODE;
  const home = process.env.LIFEGUARD_TEST_RABBITMQ_HOME;
  if (node && home) {
    return execute('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-n', node, ...args], {
      timeout: 30_000,
      env: { ...process.env, HOME: home },
    });
  }
  return execute('rabbitmqctl', [...args], { timeout: 30_000 });
}

/** Where the tests find RabbitMQ (override with LIFEGUARD_TEST_AMQP_HOST/PORT and ..._MANAGEMENT_URL). */
export const RABBITMQ = {
  host: process.env.LIFEGUARD_TEST_AMQP_HOST ?? '127.0.0.1',
  port: Number(process.env.LIFEGUARD_TEST_AMQP_PORT ?? 5672),
  user: process.env.LIFEGUARD_TEST_AMQP_USER ?? 'guest',
  password: process.env.LIFEGUARD_TEST_AMQP_PASSWORD ?? 'guest',
  managementUrl: process.env.LIFEGUARD_TEST_RABBITMQ_MANAGEMENT_URL ?? 'http://127.0.0.1:15672',
};

async function management(method: string, path: string, body?: unknown): Promise<Response> {
  const auth = Buffer.from(`${RABBITMQ.user}:${RABBITMQ.password}`).toString('base64');
  const response = await fetch(`${RABBITMQ.managementUrl}/api${path}`, {
    method,
    headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok && response.status !== 404) {
    throw new Error(
      `RabbitMQ management ${method} ${path}: HTTP ${response.status} ${await response.text()}`,
    );
  }
  return response;
}

/** A private RabbitMQ vhost for one test file, and an AMQP URL into it. */
export interface TestVhost {
  readonly name: string;
  readonly url: string;
  /** Reads a JSON resource of this vhost from the management API (`queues/<name>`, ...). */
  get<T>(resource: string): Promise<T>;
  /** Takes the test user's permissions on the vhost away (connection.open is then refused). */
  revokePermissions(): Promise<void>;
  /** Deletes the vhost and everything in it. */
  delete(): Promise<void>;
}

/** Creates a vhost `t-<label>-<random>` through the management API, with full permissions for the test user. */
export async function createTestVhost(label = 'test'): Promise<TestVhost> {
  const name = `t-${label}-${randomUUID().slice(0, 8)}`;
  const encoded = encodeURIComponent(name);
  await management('PUT', `/vhosts/${encoded}`);
  await management('PUT', `/permissions/${encoded}/${encodeURIComponent(RABBITMQ.user)}`, {
    configure: '.*',
    write: '.*',
    read: '.*',
  });
  return {
    name,
    url: `amqp://${RABBITMQ.user}:${RABBITMQ.password}@${RABBITMQ.host}:${RABBITMQ.port}/${encoded}`,
    async get<T>(resource: string): Promise<T> {
      const response = await management(
        'GET',
        `/${resource.split('/')[0]}/${encoded}/${resource.split('/').slice(1).map(encodeURIComponent).join('/')}`,
      );
      return (await response.json()) as T;
    },
    async revokePermissions() {
      await management('DELETE', `/permissions/${encoded}/${encodeURIComponent(RABBITMQ.user)}`);
    },
    async delete() {
      await management('DELETE', `/vhosts/${encoded}`);
    },
  };
}

/**
 * Closes the connection(s) whose `connection_name` client property equals `connectionName`, with
 * `rabbitmqctl close_connection` (the broker sends connection.close 320 CONNECTION_FORCED).
 * Only connections of this exact name are touched.
 * @returns how many connections were closed
 */
export async function closeConnectionByName(connectionName: string): Promise<number> {
  const { stdout } = await rabbitmqctl(['-q', 'list_connections', 'pid', 'client_properties']);
  let closed = 0;
  for (const line of stdout.split('\n')) {
    if (!line.includes(`{"connection_name","${connectionName}"}`)) continue;
    const pid = line.split('\t')[0]!.trim();
    await rabbitmqctl(['-q', 'close_connection', pid, 'closed by a lifeguard test']);
    closed++;
  }
  return closed;
}

/**
 * Takes every message off lifeguard's dead-letter queue and returns their dead-letter reasons, oldest
 * first.
 * @param client anything with `withChannel` (the runtime's AmqpClient)
 */
export async function takeDeadLetterReasons(client: {
  withChannel<Result>(work: (channel: Channel) => Promise<Result>): Promise<Result>;
}): Promise<string[]> {
  const reasons: string[] = [];
  await client.withChannel(async (channel) => {
    for (;;) {
      const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: true });
      if (message === false) break;
      reasons.push(String(message.properties.headers?.[DEAD_LETTER_HEADERS.reason]));
    }
  });
  return reasons;
}
