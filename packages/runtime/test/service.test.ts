import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { QUEUES } from '@lifeguard/contracts';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  startPrivateRedis,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import {
  BrokerRefusedError,
  BrokerUnreachableError,
  ConfigError,
  EVENT_JOURNAL_BINDINGS,
  startService,
} from '../src/index.ts';

describe('startService', () => {
  let vhost: TestVhost;
  const prefix = randomKeyPrefix('service');
  before(async () => {
    vhost = await createTestVhost('service');
  });
  after(async () => {
    const redis = testRedis();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  const env = (overrides: Record<string, string>) => ({
    LIFEGUARD_AMQP_URL: vhost.url,
    LIFEGUARD_REDIS_KEY_PREFIX: prefix,
    LIFEGUARD_HTTP_PORT: '0',
    LIFEGUARD_LOG_LEVEL: 'silent',
    ...overrides,
  });

  it('stops at once with a message naming RabbitMQ, its address (password masked) and how to start it', async () => {
    await assert.rejects(
      startService({
        service: 'test',
        defaultHttpPort: 0,
        env: env({ LIFEGUARD_AMQP_URL: 'amqp://guest:hidden-pw@127.0.0.1:1/' }),
      }),
      (error: unknown) => {
        assert.ok(error instanceof BrokerUnreachableError);
        assert.match(error.message, /RabbitMQ is not reachable at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1\//);
        assert.match(error.message, /docker compose up -d rabbitmq/);
        assert.doesNotMatch(error.message, /hidden-pw/);
        return true;
      },
    );
  });

  it('stops at once with a message naming Redis and its address when Redis is unreachable', async () => {
    await assert.rejects(
      startService({
        service: 'test',
        defaultHttpPort: 0,
        env: env({ LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:1/0' }),
      }),
      (error: unknown) => {
        assert.ok(error instanceof BrokerUnreachableError);
        assert.match(error.message, /Redis is not reachable at redis:\/\/127\.0\.0\.1:1\/0/);
        assert.match(error.message, /docker compose up -d redis/);
        return true;
      },
    );
  });

  it('stops with the config error (exit 78) when Redis refuses the database (/99), writing nothing to database 0', async () => {
    await assert.rejects(
      startService({
        service: 'test',
        defaultHttpPort: 0,
        env: env({ LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:6379/99' }),
      }),
      (error: unknown) => {
        assert.ok(error instanceof BrokerRefusedError, String(error));
        assert.ok(error instanceof ConfigError);
        assert.match(
          error.message,
          /refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range/,
        );
        return true;
      },
    );
    const redis = testRedis();
    try {
      assert.deepEqual(await redis.keys(`${prefix}:*`), []);
    } finally {
      await redis.quit();
    }
  });

  it('stops with a config error naming LIFEGUARD_REDIS_URL for a database part that is not a number (/abc)', async () => {
    await assert.rejects(
      startService({
        service: 'test',
        defaultHttpPort: 0,
        env: env({ LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:6379/abc' }),
      }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError && !(error instanceof BrokerRefusedError), String(error));
        assert.match(
          error.message,
          /^invalid configuration: LIFEGUARD_REDIS_URL \(environment\): the database/,
        );
        return true;
      },
    );
  });

  it('stops with the config error (exit 78) when RabbitMQ refuses the password', async () => {
    const url = new URL(vhost.url);
    url.password = 'not-the-password';
    await assert.rejects(
      startService({ service: 'test', defaultHttpPort: 0, env: env({ LIFEGUARD_AMQP_URL: url.toString() }) }),
      (error: unknown) => {
        assert.ok(error instanceof BrokerRefusedError, String(error));
        assert.match(
          error.message,
          /refused the user name "guest" and password in LIFEGUARD_AMQP_URL: ACCESS_REFUSED/,
        );
        return true;
      },
    );
  });

  it('shuts down with exit status 78 when Redis refuses the database on a reconnect', async () => {
    const server = await startPrivateRedis(16);
    try {
      const context = await startService({
        service: 'test',
        defaultHttpPort: 0,
        // A shutdown step that hangs past 15 s is named in the output by the deadline's error line.
        env: env({
          LIFEGUARD_REDIS_URL: server.url(10),
          LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS: '15',
          LIFEGUARD_LOG_LEVEL: 'error',
        }),
      });
      let exited: number | null = null;
      (context.shutdown as unknown as { options: { exit: (code: number) => void } }).options.exit = (
        code,
      ) => {
        exited = code;
      };
      const extra = await context.connectRedis('worker', 'bullmq-test');
      context.finishStartup();
      await server.restart(4);
      await waitFor('the shutdown', () => exited !== null, 20_000);
      assert.equal(exited, 78);
      assert.equal(context.redis.status, 'end');
      assert.equal(extra.status, 'end');
    } finally {
      await server.stop();
    }
  });

  it('is not ready before finishStartup and ready after it, publishes confirmed events into the journal, and shuts down cleanly', async () => {
    const context = await startService({ service: 'test', defaultHttpPort: 0, env: env({}) });
    let exited: number | null = null;
    (context.shutdown as unknown as { options: { exit: (code: number) => void } }).options.exit = (code) => {
      exited = code;
    };
    const base = `http://127.0.0.1:${context.admin.port}`;
    // Before finishStartup the worker may still be adding its own checks: not ready yet.
    const early = await fetch(`${base}/readyz`);
    assert.equal(early.status, 503);
    assert.equal(((await early.json()) as { checks: Record<string, string> }).checks.startup, 'in progress');
    context.finishStartup();
    try {
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      const event = await context.events.publish('host.reenabled', {
        host: 'compute-1',
        serviceId: 's-1',
        incidentId: 'inc-1',
      });
      const timeline = await context.journal.incident('inc-1');
      assert.deepEqual(
        timeline.map((each) => each.id),
        [event.id],
      );
      const bindings = await vhost.get<Array<{ source: string; routing_key: string }>>(
        `queues/${QUEUES.eventJournal}/bindings`,
      );
      assert.deepEqual(
        bindings
          .filter((binding) => binding.source !== '')
          .map((binding) => binding.routing_key)
          .sort(),
        [...EVENT_JOURNAL_BINDINGS].sort(),
        'the journal keeps Instance HA events only',
      );
    } finally {
      await context.shutdown.shutdown('test');
    }
    assert.equal(exited, 0);
  });
});
