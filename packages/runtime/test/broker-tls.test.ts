import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  makeTestCertificates,
  startTlsRabbitmq,
  startTlsRedis,
  type TestCertificates,
  type TlsBroker,
} from '@lifeguard/testing';
import {
  BrokerRefusedError,
  BrokerUnreachableError,
  ConfigError,
  readTlsFiles,
  type ServiceContext,
  startService,
} from '../src/index.ts';

const redisUser = 'lifeguard-tls';
const redisPassword = 'Redis-Acl-Secret-77';

describe('RabbitMQ (amqps://) and Redis (rediss://, ACL user) over TLS by configuration', () => {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-broker-tls-'));
  let certificates: TestCertificates;
  let redis: TlsBroker;
  let rabbitmq: TlsBroker;

  before(async () => {
    certificates = makeTestCertificates(directory);
    [redis, rabbitmq] = await Promise.all([
      startTlsRedis(certificates, redisUser, redisPassword),
      startTlsRabbitmq(certificates, join(directory, 'rabbitmq')),
    ]);
  });
  after(async () => {
    await Promise.all([redis?.stop(), rabbitmq?.stop()]);
    rmSync(directory, { recursive: true, force: true });
  });

  const env = (overrides: Record<string, string | undefined> = {}) => ({
    LIFEGUARD_AMQP_URL: `amqps://guest:guest@127.0.0.1:${rabbitmq.port}/`,
    LIFEGUARD_AMQP_TLS_CA_FILE: certificates.ca,
    LIFEGUARD_AMQP_TLS_CERT_FILE: certificates.clientCert,
    LIFEGUARD_AMQP_TLS_KEY_FILE: certificates.clientKey,
    LIFEGUARD_REDIS_URL: `rediss://${redisUser}:${redisPassword}@127.0.0.1:${redis.port}/0`,
    LIFEGUARD_REDIS_TLS_CA_FILE: certificates.ca,
    LIFEGUARD_REDIS_TLS_CERT_FILE: certificates.clientCert,
    LIFEGUARD_REDIS_TLS_KEY_FILE: certificates.clientKey,
    LIFEGUARD_HTTP_PORT: '0',
    LIFEGUARD_LOG_LEVEL: 'silent',
    ...overrides,
  });

  /** Starts a service with `environment`; the test shuts it down without exiting the process. */
  async function start(environment: Record<string, string | undefined>): Promise<ServiceContext> {
    const context = await startService({ service: 'tls-test', defaultHttpPort: 0, env: environment });
    (context.shutdown as unknown as { options: { exit: (code: number) => void } }).options.exit = () =>
      undefined;
    return context;
  }

  it('a service connects to both brokers with the CA and client certificate files; Redis answers as the ACL user', async () => {
    const context = await start(env());
    try {
      assert.equal(await context.redis.call('ACL', 'WHOAMI'), redisUser);
      await context.redis.set(`tls-test:${process.pid}`, 'over TLS', 'EX', 60);
      assert.equal(await context.redis.get(`tls-test:${process.pid}`), 'over TLS');
      assert.equal(context.amqp.isHealthy, true);
      const queue = await context.amqp.withChannel(async (channel) => {
        const declared = await channel.assertQueue('', { exclusive: true });
        channel.sendToQueue(declared.queue, Buffer.from('over TLS'));
        return declared.queue;
      });
      const message = await context.amqp.withChannel(async (channel) => {
        for (let attempt = 0; attempt < 50; attempt++) {
          const got = await channel.get(queue, { noAck: true });
          if (got) return got.content.toString();
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return null;
      });
      assert.equal(message, 'over TLS');
    } finally {
      await context.shutdown.shutdown('test');
    }
  });

  it('without the CA file the server certificate is not trusted: Redis start-up stops naming the address, password masked', async () => {
    await assert.rejects(start(env({ LIFEGUARD_REDIS_TLS_CA_FILE: undefined })), (error: unknown) => {
      assert.ok(error instanceof BrokerUnreachableError, String(error));
      assert.match(error.message, /certificate/);
      assert.doesNotMatch(error.message, new RegExp(redisPassword));
      return true;
    });
  });

  it('without the CA file RabbitMQ start-up stops with the certificate error', async () => {
    await assert.rejects(start(env({ LIFEGUARD_AMQP_TLS_CA_FILE: undefined })), (error: unknown) => {
      assert.ok(error instanceof BrokerUnreachableError, String(error));
      assert.match(error.message, /certificate/);
      return true;
    });
  });

  it('without a client certificate RabbitMQ (verify_peer) refuses the handshake', async () => {
    await assert.rejects(
      start(env({ LIFEGUARD_AMQP_TLS_CERT_FILE: undefined, LIFEGUARD_AMQP_TLS_KEY_FILE: undefined })),
      (error: unknown) => {
        assert.ok(error instanceof BrokerUnreachableError, String(error));
        assert.match(error.message, /certificate required|handshake|socket/i);
        return true;
      },
    );
  });

  it('a wrong ACL password is refused, naming LIFEGUARD_REDIS_URL, the password masked', async () => {
    const url = `rediss://${redisUser}:not-the-password@127.0.0.1:${redis.port}/0`;
    await assert.rejects(start(env({ LIFEGUARD_REDIS_URL: url })), (error: unknown) => {
      assert.ok(error instanceof BrokerRefusedError, String(error));
      assert.match(error.message, /LIFEGUARD_REDIS_URL/);
      assert.doesNotMatch(error.message, /not-the-password/);
      return true;
    });
  });
});

describe('TLS file settings are checked, each error naming the key', () => {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-tls-settings-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  const certificates = makeTestCertificates(directory);

  const problemKeys = (run: () => unknown): string[] => {
    try {
      run();
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      return error.problems.map((problem) => problem.key);
    }
    assert.fail('expected ConfigError');
  };

  it('a CA file that cannot be read stops start-up naming LIFEGUARD_REDIS_TLS_CA_FILE', async () => {
    await assert.rejects(
      startService({
        service: 'tls-test',
        defaultHttpPort: 0,
        env: {
          LIFEGUARD_REDIS_URL: 'rediss://127.0.0.1:6379/0',
          LIFEGUARD_REDIS_TLS_CA_FILE: join(directory, 'missing.pem'),
          LIFEGUARD_LOG_LEVEL: 'silent',
        },
      }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, /LIFEGUARD_REDIS_TLS_CA_FILE \(environment\): cannot be read: ENOENT/);
        return true;
      },
    );
  });

  it('a client certificate without its key (and the reverse) names the missing key', () => {
    assert.deepEqual(
      problemKeys(() =>
        readTlsFiles('amqp', {
          LIFEGUARD_AMQP_URL: 'amqps://127.0.0.1:5671/',
          LIFEGUARD_AMQP_TLS_CERT_FILE: certificates.clientCert,
        }),
      ),
      ['LIFEGUARD_AMQP_TLS_KEY_FILE'],
    );
    assert.deepEqual(
      problemKeys(() =>
        readTlsFiles('redis', {
          LIFEGUARD_REDIS_URL: 'rediss://127.0.0.1:6380/0',
          LIFEGUARD_REDIS_TLS_KEY_FILE: certificates.clientKey,
        }),
      ),
      ['LIFEGUARD_REDIS_TLS_CERT_FILE'],
    );
  });

  it('TLS files with a plain amqp:// or redis:// URL are refused, naming each file key', () => {
    assert.deepEqual(
      problemKeys(() =>
        readTlsFiles('redis', {
          LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:6379/0',
          LIFEGUARD_REDIS_TLS_CA_FILE: certificates.ca,
        }),
      ),
      ['LIFEGUARD_REDIS_TLS_CA_FILE'],
    );
    assert.deepEqual(
      problemKeys(() =>
        readTlsFiles('amqp', {
          LIFEGUARD_AMQP_URL: 'amqp://127.0.0.1:5672/',
          LIFEGUARD_AMQP_TLS_CERT_FILE: certificates.clientCert,
          LIFEGUARD_AMQP_TLS_KEY_FILE: certificates.clientKey,
        }),
      ),
      ['LIFEGUARD_AMQP_TLS_CERT_FILE', 'LIFEGUARD_AMQP_TLS_KEY_FILE'],
    );
  });

  it('reads nothing when no TLS file is configured', () => {
    assert.equal(readTlsFiles('redis', { LIFEGUARD_REDIS_URL: 'rediss://127.0.0.1:6380/0' }), undefined);
  });
});
