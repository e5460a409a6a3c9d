import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CapturedLines,
  closeConnectionByName,
  closedPort,
  createTestVhost,
  type TestVhost,
  waitFor,
} from '@lifeguard/testing';
import {
  AmqpClient,
  AmqpUrlListError,
  ConfigError,
  createLogger,
  environmentSource,
  loadRuntimeConfig,
  parseAmqpUrlList,
  redactUrl,
} from '../src/index.ts';

describe('LIFEGUARD_AMQP_URL with several RabbitMQ nodes (docs/operations.md#511-rabbitmq-cluster)', () => {
  it('reads one URL, a comma-separated list, and oslo’s transport_url with several hosts', () => {
    assert.deepEqual(parseAmqpUrlList('amqp://guest:guest@127.0.0.1:5672/'), [
      'amqp://guest:guest@127.0.0.1:5672/',
    ]);
    assert.deepEqual(parseAmqpUrlList('amqp://u:p@rabbit-1:5672/lg, amqps://u:p@rabbit-2:5671/lg'), [
      'amqp://u:p@rabbit-1:5672/lg',
      'amqps://u:p@rabbit-2:5671/lg',
    ]);
    assert.deepEqual(
      parseAmqpUrlList('rabbit://u:p@rabbit-1:5672,v:q@rabbit-2:5672,w:r@rabbit-3/neutron?heartbeat=10'),
      [
        'amqp://u:p@rabbit-1:5672/neutron?heartbeat=10',
        'amqp://v:q@rabbit-2:5672/neutron?heartbeat=10',
        'amqp://w:r@rabbit-3/neutron?heartbeat=10',
      ],
    );
    assert.deepEqual(parseAmqpUrlList('rabbit://u:p@rabbit-1:5672,u:p@rabbit-2:5672'), [
      'amqp://u:p@rabbit-1:5672/',
      'amqp://u:p@rabbit-2:5672/',
    ]);
  });

  it('refuses what it cannot read, naming the address at fault, and the setting at start-up', () => {
    assert.throws(() => parseAmqpUrlList('amqp://rabbit-1/,http://rabbit-2/'), {
      name: AmqpUrlListError.name,
      message: 'address 2 must be an amqp://, amqps:// or rabbit:// URL',
    });
    assert.throws(
      () => parseAmqpUrlList('amqp://a/,b:5672,amqp://c/'),
      /mixes full URLs and oslo transport_url hosts/,
    );
    assert.throws(() => parseAmqpUrlList(' , '), /no address given/);
    assert.throws(
      () =>
        loadRuntimeConfig({ httpPort: 0 }, [environmentSource({ LIFEGUARD_AMQP_URL: 'amqp://a/,ftp://b/' })]),
      (error: unknown) =>
        error instanceof ConfigError &&
        /LIFEGUARD_AMQP_URL/.test(error.message) &&
        /address 2/.test(error.message),
    );
  });

  it('masks every password of a list in logs', () => {
    assert.equal(
      redactUrl('amqp://guest:secret1@h1:5672/v,amqp://guest:secret2@h2:5672/v'),
      'amqp://guest:***@h1:5672/v,amqp://guest:***@h2:5672/v',
    );
    assert.equal(
      redactUrl('rabbit://u:secret1@h1:5672,u:secret2@h2:5672/v'),
      'rabbit://u:***@h1:5672,u:***@h2:5672/v',
    );
  });

  describe('connecting', () => {
    let vhost: TestVhost;
    before(async () => {
      vhost = await createTestVhost('url-list');
    });
    after(async () => {
      await vhost.delete();
    });

    it('tries the next node when one refuses the connection, at start-up and after losing a connection', async () => {
      const deadPort = await closedPort();
      const working = new URL(vhost.url);
      const lines = new CapturedLines();
      const logger = createLogger({ service: 'runtime-test', level: 'info', destination: lines });
      const client = await AmqpClient.connect({
        // oslo's form: the first host refuses connections.
        url: `rabbit://guest:guest@127.0.0.1:${deadPort},guest:guest@127.0.0.1:${working.port}${working.pathname}`,
        connectionName: 'runtime-test:url-list',
        service: 'test',
        logger,
      });
      const deadAddress = `amqp://guest:***@127.0.0.1:${deadPort}${working.pathname}`;
      const workingAddress = `amqp://guest:***@127.0.0.1:${working.port}${working.pathname}`;
      const named = (message: string) => lines.records().filter((line) => line.msg === message);
      try {
        assert.equal(client.isHealthy, true);
        assert.deepEqual(
          named('AMQP connection attempt failed; trying the next node').map((line) => [line.url, line.next]),
          [[deadAddress, workingAddress]],
        );
        // Lost: the next address is the dead node, then the working one again.
        assert.equal(await closeConnectionByName('runtime-test:url-list'), 1);
        await waitFor(
          'reconnected through the list',
          () => client.isHealthy && named('AMQP connected').length === 2,
          30_000,
        );
        assert.deepEqual(
          named('AMQP connection lost; reconnecting').map((line) => [line.url, line.next]),
          [[workingAddress, deadAddress]],
        );
        assert.equal(named('AMQP connection attempt failed; trying the next node').length, 2);
        assert.deepEqual(
          named('AMQP connected').map((line) => line.url),
          [workingAddress, workingAddress],
        );
      } finally {
        await client.close();
      }
    });
  });
});
