import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CapturedLines,
  closedPort,
  createTestVhost,
  type PrivateRedis,
  REDIS_URL,
  startPrivateRedis,
  startPrivateSentinel,
  type TestVhost,
} from '@lifeguard/testing';
import { Redis } from 'ioredis';
import {
  AmqpClient,
  BrokerRefusedError,
  BrokerUnreachableError,
  ConfigError,
  connectRedis,
  createLogger,
  loadRuntimeConfig,
  REDIS_REFUSED_EVENT,
} from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });

/** `url` with another password or path. */
function withUrl(url: string, change: { password?: string; pathname?: string }): string {
  const parsed = new URL(url);
  if (change.password !== undefined) parsed.password = change.password;
  if (change.pathname !== undefined) parsed.pathname = change.pathname;
  return parsed.toString();
}

function connectAmqp(url: string): Promise<AmqpClient> {
  return AmqpClient.connect({ url, connectionName: 'runtime-test:refusal', service: 'test', logger });
}

describe('AmqpClient.connect: cannot connect, or connected and refused', () => {
  let vhost: TestVhost;
  before(async () => {
    vhost = await createTestVhost('refusal');
  });
  after(() => vhost.delete());

  it('a refusal at start-up is reported once, by the error connect throws, with no raw stack logged before it', async () => {
    const lines = new CapturedLines();
    const capturing = createLogger({ service: 'runtime-test', level: 'info', destination: lines });
    await assert.rejects(
      AmqpClient.connect({
        url: withUrl(vhost.url, { password: 'wrong-secret' }),
        connectionName: 'runtime-test:refusal-log',
        service: 'test',
        logger: capturing,
      }),
      BrokerRefusedError,
    );
    const loud = lines.records().filter((record) => Number(record.level) >= 50);
    assert.deepEqual(loud, [], 'no error-level record: the thrown BrokerRefusedError is the report');
    assert.doesNotMatch(lines.text, /"stack"/);
  });

  it('a wrong password: the credentials in LIFEGUARD_AMQP_URL were refused (exit 78), never "start it"', async () => {
    await assert.rejects(connectAmqp(withUrl(vhost.url, { password: 'wrong-secret' })), (error: unknown) => {
      assert.ok(error instanceof BrokerRefusedError, String(error));
      assert.ok(error instanceof ConfigError, 'a ConfigError: runMain exits 78');
      assert.equal(error.key, 'LIFEGUARD_AMQP_URL');
      assert.match(
        error.message,
        /^RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/t-refusal-\w+ refused the user name "guest" and password in LIFEGUARD_AMQP_URL: ACCESS_REFUSED - Login was refused/,
      );
      assert.match(error.message, /rabbitmqctl change_password guest '<password>'/);
      assert.match(error.message, /rabbitmqctl add_user guest/);
      assert.doesNotMatch(error.message, /not reachable|Start it|wrong-secret/);
      return true;
    });
  });

  it("a vhost that does not exist: RabbitMQ's own reason and how to create it", async () => {
    await assert.rejects(
      connectAmqp(withUrl(vhost.url, { pathname: '/lifeguard-no-such-vhost' })),
      (error: unknown) => {
        assert.ok(error instanceof BrokerRefusedError, String(error));
        assert.match(
          error.message,
          /refused the virtual host "lifeguard-no-such-vhost" in LIFEGUARD_AMQP_URL: NOT_ALLOWED - vhost lifeguard-no-such-vhost not found\. It does not exist: create it with rabbitmqctl add_vhost lifeguard-no-such-vhost && rabbitmqctl set_permissions -p lifeguard-no-such-vhost guest '\.\*' '\.\*' '\.\*'/,
        );
        assert.doesNotMatch(error.message, /not reachable|Start it|ConnectionOpenOk/);
        return true;
      },
    );
  });

  it('a vhost the user has no permissions on: says so and how to grant them', async () => {
    const closed = await createTestVhost('refusal-perm');
    try {
      await closed.revokePermissions();
      await assert.rejects(connectAmqp(closed.url), (error: unknown) => {
        assert.ok(error instanceof BrokerRefusedError, String(error));
        assert.match(
          error.message,
          /NOT_ALLOWED - access to vhost 't-refusal-perm-\w+' refused for user 'guest'/,
        );
        assert.match(error.message, /rabbitmqctl set_permissions -p t-refusal-perm-\w+ guest/);
        assert.doesNotMatch(error.message, /add_vhost/);
        return true;
      });
    } finally {
      await closed.delete();
    }
  });

  it('nothing listening: not reachable, the cause, and how to start it (exit 69)', async () => {
    const port = await closedPort();
    await assert.rejects(connectAmqp(`amqp://guest:hidden@127.0.0.1:${port}/`), (error: unknown) => {
      assert.ok(error instanceof BrokerUnreachableError, String(error));
      assert.ok(!(error instanceof ConfigError));
      assert.match(
        error.message,
        new RegExp(
          `^RabbitMQ is not reachable at amqp://guest:\\*\\*\\*@127\\.0\\.0\\.1:${port}/: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\. Start it`,
        ),
      );
      return true;
    });
  });
});

describe('connectRedis: cannot connect, or connected and refused', () => {
  it("a database this Redis does not have (/99): refused, naming LIFEGUARD_REDIS_URL and Redis's answer, for every role", async () => {
    for (const role of ['default', 'worker', 'producer'] as const) {
      await assert.rejects(
        connectRedis(
          { url: withUrl(REDIS_URL, { pathname: '/99' }), keyPrefix: 'unused' },
          role,
          'test',
          logger,
        ),
        (error: unknown) => {
          assert.ok(error instanceof BrokerRefusedError, `${role}: ${String(error)}`);
          assert.ok(error instanceof ConfigError);
          assert.equal(error.key, 'LIFEGUARD_REDIS_URL');
          assert.match(
            error.message,
            /^Redis at redis:\/\/127\.0\.0\.1:6379\/99 refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range\. Use a database this Redis has/,
          );
          return true;
        },
      );
    }
  });

  it('a database part that is not a whole number (/abc, /-1, /1/2): a config error naming LIFEGUARD_REDIS_URL, nothing sent', async () => {
    for (const path of ['/abc', '/-1', '/1/2', '/1.5']) {
      const url = withUrl(REDIS_URL, { pathname: path });
      assert.throws(
        () =>
          loadRuntimeConfig({ httpPort: 0 }, [{ name: 'environment', values: { LIFEGUARD_REDIS_URL: url } }]),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(
            error.message,
            /LIFEGUARD_REDIS_URL \(environment\): the database \(the path after host:port\) must be a whole number from 0/,
          );
          return true;
        },
        path,
      );
      await assert.rejects(
        connectRedis({ url, keyPrefix: 'unused' }, 'default', 'test', logger),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError && !(error instanceof BrokerRefusedError), String(error));
          assert.match(error.message, /LIFEGUARD_REDIS_URL/);
          return true;
        },
      );
    }
    for (const path of ['', '/', '/0', '/15']) {
      const url = withUrl(REDIS_URL, { pathname: path });
      loadRuntimeConfig({ httpPort: 0 }, [{ name: 'environment', values: { LIFEGUARD_REDIS_URL: url } }]);
    }
  });

  it('nothing listening: not reachable, with the address and the real cause (no "Connection is closed.")', async () => {
    const port = await closedPort();
    await assert.rejects(
      connectRedis({ url: `redis://127.0.0.1:${port}/0`, keyPrefix: 'unused' }, 'default', 'test', logger),
      (error: unknown) => {
        assert.ok(error instanceof BrokerUnreachableError, String(error));
        assert.match(
          error.message,
          new RegExp(
            `^Redis is not reachable at redis://127\\.0\\.0\\.1:${port}/0: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\. Start it`,
          ),
        );
        assert.doesNotMatch(error.message, /Connection is closed|\.\./);
        return true;
      },
    );
  });

  it('a user Redis does not know: the credentials were refused (password masked)', async () => {
    const url = REDIS_URL.replace('redis://', 'redis://lifeguard-nobody:hidden-pw@');
    await assert.rejects(
      connectRedis({ url, keyPrefix: 'unused' }, 'default', 'test', logger),
      (error: unknown) => {
        assert.ok(error instanceof BrokerRefusedError, String(error));
        assert.match(
          error.message,
          /^Redis at redis:\/\/lifeguard-nobody:\*\*\*@127\.0\.0\.1:6379\/0 refused the user name "lifeguard-nobody" and password in LIFEGUARD_REDIS_URL: WRONGPASS/,
        );
        assert.doesNotMatch(error.message, /hidden-pw|not reachable/);
        return true;
      },
    );
  });

  it('a Redis that wants a password, given none: says so (not "database 3"); a wrong one: refused', async () => {
    const server = await startPrivateRedis(16, 'redis-test-pw');
    try {
      await assert.rejects(
        connectRedis({ url: server.url(3), keyPrefix: 'unused' }, 'default', 'test', logger),
        (error: unknown) => {
          assert.ok(error instanceof BrokerRefusedError, String(error));
          assert.match(
            error.message,
            /refused the connection without a password in LIFEGUARD_REDIS_URL: .*NOAUTH Authentication required/,
          );
          assert.doesNotMatch(error.message, /database 3/);
          return true;
        },
      );
      const wrong = server.url(3).replace('redis://', 'redis://:not-it@');
      await assert.rejects(
        connectRedis({ url: wrong, keyPrefix: 'unused' }, 'default', 'test', logger),
        (error: unknown) => {
          assert.ok(error instanceof BrokerRefusedError, String(error));
          assert.match(error.message, /refused the password in LIFEGUARD_REDIS_URL: WRONGPASS/);
          assert.doesNotMatch(error.message, /not-it/);
          return true;
        },
      );
      const right = server.url(3).replace('redis://', 'redis://:redis-test-pw@');
      const client = await connectRedis({ url: right, keyPrefix: 'unused' }, 'default', 'test', logger);
      client.disconnect();
    } finally {
      await server.stop();
    }
  });

  describe('when Redis refuses the database on a reconnect', () => {
    let server: PrivateRedis;
    before(async () => {
      server = await startPrivateRedis(16);
    });
    after(() => server.stop());

    it('disconnects for good and says so: queued writes fail, database 0 is never written', async () => {
      const client = await connectRedis(
        { url: server.url(10), keyPrefix: 'unused' },
        'default',
        'test',
        logger,
      );
      const refused = new Promise<BrokerRefusedError>((resolve) => client.once(REDIS_REFUSED_EVENT, resolve));
      await client.set('before', '1');
      await server.restart(4);
      // Sent while reconnecting: ioredis queues them for after the (failing) SELECT 10.
      const writes = await Promise.allSettled([client.set('during', '1'), client.set('during-2', '1')]);
      const error = await refused;
      assert.match(
        error.message,
        /refused database 10 in LIFEGUARD_REDIS_URL: SELECT 10: ERR DB index is out of range/,
      );
      assert.deepEqual(
        writes.map((write) => write.status),
        ['rejected', 'rejected'],
      );
      assert.equal(client.status, 'end');
      const check = new Redis(server.url(0));
      try {
        assert.deepEqual(await check.keys('*'), []);
      } finally {
        check.disconnect();
      }
    });
  });

  it('through Sentinel, a database the master does not have is refused the same way', async () => {
    const master = await startPrivateRedis(4);
    const sentinel = await startPrivateSentinel(master.port);
    try {
      const settings = {
        url: 'redis://127.0.0.1:6379/10',
        sentinels: [{ host: '127.0.0.1', port: sentinel.port }],
        sentinelName: 'mymaster',
        keyPrefix: 'unused',
      };
      await assert.rejects(connectRedis(settings, 'default', 'test', logger), (error: unknown) => {
        assert.ok(error instanceof BrokerRefusedError, String(error));
        assert.match(
          error.message,
          new RegExp(
            `^Redis at sentinels 127\\.0\\.0\\.1:${sentinel.port} \\(master mymaster\\) refused database 10 in LIFEGUARD_REDIS_URL: SELECT 10: ERR DB index is out of range`,
          ),
        );
        return true;
      });
      const client = await connectRedis(
        { ...settings, url: 'redis://127.0.0.1:6379/3' },
        'default',
        'test',
        logger,
      );
      try {
        assert.match(
          (await client.client('INFO')) as string,
          new RegExp(`laddr=127\\.0\\.0\\.1:${master.port} .* db=3 `),
        );
      } finally {
        client.disconnect();
      }
    } finally {
      await sentinel.stop();
      await master.stop();
    }
  });
});
