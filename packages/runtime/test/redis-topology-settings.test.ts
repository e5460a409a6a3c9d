import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CLUSTER_MAX_REDIRECTIONS,
  ConfigError,
  keyPrefixHashTag,
  loadRuntimeConfig,
  parseRedisNodes,
  redisClusterOptions,
  redisSettingsFrom,
} from '../src/index.ts';

const load = (values: Record<string, string>) =>
  loadRuntimeConfig({ httpPort: 0 }, [{ name: 'environment', values }]);

/** The problems of a ConfigError thrown by `action`, as `KEY: problem` lines. */
function problemsOf(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `a ConfigError, not ${String(error)}`);
    return error.problems.map((problem) => `${problem.key} (${problem.source}): ${problem.problem}`);
  }
  assert.fail('no ConfigError was thrown');
}

describe('Redis Cluster and Sentinel settings', () => {
  it('finds the hash tag of a key prefix as Redis Cluster does: the first {...} with something inside', () => {
    assert.equal(keyPrefixHashTag('{lifeguard}'), 'lifeguard');
    assert.equal(keyPrefixHashTag('prod-{lifeguard}-a'), 'lifeguard');
    assert.equal(keyPrefixHashTag('{a}{b}'), 'a');
    assert.equal(keyPrefixHashTag('lifeguard'), null);
    assert.equal(keyPrefixHashTag('lifeguard{}'), null, 'an empty tag hashes the whole key');
    assert.equal(
      keyPrefixHashTag('lifeguard{prod'),
      null,
      'a tag left open would be closed by a later part of the key',
    );
    assert.equal(
      keyPrefixHashTag('{}x}'),
      null,
      'the first } after the first { closes the tag, leaving it empty',
    );
  });

  it('a cluster with a prefix without a hash tag stops start-up naming LIFEGUARD_REDIS_KEY_PREFIX', () => {
    const problems = problemsOf(() =>
      load({
        LIFEGUARD_REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000',
        LIFEGUARD_REDIS_KEY_PREFIX: 'lifeguard',
      }),
    );
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^LIFEGUARD_REDIS_KEY_PREFIX \(environment\): must hold a \{hash tag\}/);
  });

  it('the default prefix has no hash tag, so a cluster without a prefix is refused too', () => {
    const problems = problemsOf(() => load({ LIFEGUARD_REDIS_CLUSTER_NODES: '10.0.0.1:7000' }));
    assert.match(problems.join('\n'), /^LIFEGUARD_REDIS_KEY_PREFIX \(default\): must hold a \{hash tag\}/);
  });

  it('a cluster refuses a database other than 0 and Sentinels set as well, each under its key', () => {
    const problems = problemsOf(() =>
      load({
        LIFEGUARD_REDIS_CLUSTER_NODES: '10.0.0.1:7000',
        LIFEGUARD_REDIS_KEY_PREFIX: '{lifeguard}',
        LIFEGUARD_REDIS_URL: 'redis://10.0.0.1:7000/2',
        LIFEGUARD_REDIS_SENTINELS: '10.0.0.9:26379',
      }),
    );
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^LIFEGUARD_REDIS_URL \(environment\): a Redis Cluster has only database 0/);
    assert.match(problems[1]!, /^LIFEGUARD_REDIS_CLUSTER_NODES \(environment\): set either/);
  });

  it('a malformed node list is refused naming LIFEGUARD_REDIS_CLUSTER_NODES', () => {
    const problems = problemsOf(() =>
      load({ LIFEGUARD_REDIS_CLUSTER_NODES: '10.0.0.1', LIFEGUARD_REDIS_KEY_PREFIX: '{lifeguard}' }),
    );
    assert.match(problems.join('\n'), /^LIFEGUARD_REDIS_CLUSTER_NODES \(environment\): must be host:port/);
  });

  it('a prefix without a hash tag is fine on one server and behind Sentinels', () => {
    assert.equal(
      load({ LIFEGUARD_REDIS_SENTINELS: '10.0.0.9:26379' }).LIFEGUARD_REDIS_KEY_PREFIX,
      'lifeguard',
    );
  });

  it('a valid cluster configuration becomes settings with the nodes, and ioredis Cluster options per role', () => {
    const config = load({
      LIFEGUARD_REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7001,redis-3.example.org:7002',
      LIFEGUARD_REDIS_KEY_PREFIX: '{lifeguard-prod}',
      LIFEGUARD_REDIS_URL: 'rediss://lifeguard:s3cret@10.0.0.1:7000/0',
    });
    const settings = redisSettingsFrom(config, undefined);
    assert.deepEqual(settings.clusterNodes, [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: 'redis-3.example.org', port: 7002 },
    ]);
    assert.equal(settings.sentinels, undefined);
    const worker = redisClusterOptions(settings, 'worker', 'fencing-worker:worker:a');
    assert.equal(worker.redisOptions?.maxRetriesPerRequest, null, 'BullMQ workers never give up a command');
    assert.equal(worker.redisOptions?.username, 'lifeguard');
    assert.equal(worker.redisOptions?.password, 's3cret');
    assert.ok(worker.redisOptions?.tls, 'rediss:// means TLS to every node');
    assert.equal(worker.maxRedirections, CLUSTER_MAX_REDIRECTIONS);
    const producer = redisClusterOptions(settings, 'producer', 'fencing-worker:producer:a');
    assert.equal(producer.enableOfflineQueue, false, 'a producer fails fast instead of queueing');
    assert.equal(producer.redisOptions?.maxRetriesPerRequest, 3);
  });

  it('cluster options refuse a prefix without a hash tag and a database other than 0 when built directly', () => {
    const nodes = parseRedisNodes('127.0.0.1:7000');
    assert.match(
      problemsOf(() =>
        redisClusterOptions(
          { url: 'redis://127.0.0.1:7000/0', keyPrefix: 'lifeguard', clusterNodes: nodes },
          'default',
          'x',
        ),
      ).join('\n'),
      /^LIFEGUARD_REDIS_KEY_PREFIX \(RedisSettings.keyPrefix\): must hold a \{hash tag\}/,
    );
    assert.match(
      problemsOf(() =>
        redisClusterOptions(
          { url: 'redis://127.0.0.1:7000/1', keyPrefix: '{a}', clusterNodes: nodes },
          'default',
          'x',
        ),
      ).join('\n'),
      /^LIFEGUARD_REDIS_URL \(RedisSettings.url\): a Redis Cluster has only database 0/,
    );
  });
});

describe('broker URLs', () => {
  it('take their default when the variable is empty (a Compose file passing an unset variable as empty)', () => {
    const config = load({ LIFEGUARD_REDIS_URL: '', LIFEGUARD_AMQP_URL: '' });
    assert.equal(config.LIFEGUARD_REDIS_URL, 'redis://127.0.0.1:6379/0');
    assert.equal(config.LIFEGUARD_AMQP_URL, 'amqp://guest:guest@127.0.0.1:5672/');
  });

  it('name one problem for a Redis URL that is not one, not one per check', () => {
    assert.deepEqual(
      problemsOf(() => load({ LIFEGUARD_REDIS_URL: 'http://cache:6379' })),
      ['LIFEGUARD_REDIS_URL (environment): must be a redis:// or rediss:// URL'],
    );
    assert.deepEqual(
      problemsOf(() => load({ LIFEGUARD_REDIS_URL: 'redis://cache:6379/one' })),
      [
        'LIFEGUARD_REDIS_URL (environment): the database (the path after host:port) must be a whole number from 0, as in redis://127.0.0.1:6379/0',
      ],
    );
  });
});
