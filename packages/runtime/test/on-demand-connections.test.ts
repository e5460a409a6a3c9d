import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { closedPort, createTestVhost, REDIS_URL, randomKeyPrefix, type TestVhost } from '@lifeguard/testing';
import {
  BrokerUnreachableError,
  ConfigError,
  createLogger,
  environmentSource,
  loadRuntimeConfig,
  OnDemandConnections,
  type OnDemandConnectionsOptions,
} from '../src/index.ts';

const logger = createLogger({ service: 'runtime-test', level: 'silent' });
const source = { service: 'lifeguard-test', instance: 'on-demand' };

function connections(env: NodeJS.ProcessEnv, retryFailedConnections: boolean): OnDemandConnections {
  const options: OnDemandConnectionsOptions = {
    config: loadRuntimeConfig({ httpPort: 0 }, [environmentSource(env)]),
    source,
    logger,
    connectTimeoutMilliseconds: 2000,
    retryFailedConnections,
  };
  return new OnDemandConnections(options);
}

describe('OnDemandConnections: the CLI’s and the console’s connections, made from the environment', () => {
  let vhost: TestVhost;
  before(async () => {
    vhost = await createTestVhost('on-demand');
  });
  after(async () => {
    await vhost.delete();
  });

  it('opens Redis and RabbitMQ on first use, once, named <service>:<instance>, and closes them', async () => {
    const prefix = randomKeyPrefix('on-demand');
    const opened = connections(
      { LIFEGUARD_REDIS_URL: REDIS_URL, LIFEGUARD_AMQP_URL: vhost.url, LIFEGUARD_REDIS_KEY_PREFIX: prefix },
      false,
    );
    assert.equal(opened.keyPrefix, prefix);
    const redis = await opened.redis();
    assert.equal(await opened.redis(), redis, 'one Redis connection per tool');
    assert.equal(await redis.client('GETNAME'), 'lifeguard-test:on-demand');
    const amqp = await opened.amqp();
    assert.equal(await opened.amqp(), amqp, 'one RabbitMQ connection per tool');
    await amqp.withChannel(async () => undefined);
    await opened.close();
    await assert.rejects(redis.ping(), /Connection is closed/);
    await assert.rejects(
      amqp.withChannel(async () => undefined),
      'no channel opens on the closed RabbitMQ connection',
    );
  });

  it('keeps a failed connect for a command, and tries again on the next use for the console', async () => {
    const env = { LIFEGUARD_REDIS_URL: `redis://127.0.0.1:${await closedPort()}/0` };
    const command = connections(env, false);
    const first = command.redis();
    await assert.rejects(first, BrokerUnreachableError);
    assert.equal(command.redis(), first, 'the command gets the same failure');
    await command.close();

    const console = connections(env, true);
    const failed = console.redis();
    await assert.rejects(failed, BrokerUnreachableError);
    const again = console.redis();
    assert.notEqual(again, failed, 'the console connects again');
    await assert.rejects(again, BrokerUnreachableError);
    await console.close();
  });

  it('reads RabbitMQ’s TLS files as the workers do: LIFEGUARD_AMQP_TLS_CA_FILE next to an amqp:// URL is refused', () => {
    const directory = mkdtempSync(join(tmpdir(), 'on-demand-'));
    const ca = join(directory, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
    const opened = connections({ LIFEGUARD_AMQP_URL: vhost.url, LIFEGUARD_AMQP_TLS_CA_FILE: ca }, false);
    assert.throws(
      () => opened.amqp(),
      (error: unknown) =>
        error instanceof ConfigError &&
        /LIFEGUARD_AMQP_TLS_CA_FILE.*is set but LIFEGUARD_AMQP_URL is not a amqps:\/\/ URL/.test(
          error.message,
        ),
    );
  });
});
