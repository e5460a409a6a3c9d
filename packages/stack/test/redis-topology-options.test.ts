import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StackConfigurationError } from '../src/index.ts';
import { resolveStackOptions } from '../src/stack-options.ts';

describe('startStack Redis topology options', () => {
  it('passes cluster nodes on to the workers when the prefix holds a hash tag', () => {
    const options = resolveStackOptions(
      { keyPrefix: '{lifeguard-sim}', redisTopology: { clusterNodes: '127.0.0.1:7000,127.0.0.1:7001' } },
      {},
    );
    assert.deepEqual(options.redisTopology, {
      LIFEGUARD_REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001',
    });
  });

  it('reads the Sentinels from the environment when no option is given', () => {
    const options = resolveStackOptions(
      {},
      { LIFEGUARD_REDIS_SENTINELS: '127.0.0.1:26379', LIFEGUARD_REDIS_SENTINEL_NAME: 'lifeguard' },
    );
    assert.deepEqual(options.redisTopology, {
      LIFEGUARD_REDIS_SENTINELS: '127.0.0.1:26379',
      LIFEGUARD_REDIS_SENTINEL_NAME: 'lifeguard',
    });
  });

  it('refuses cluster nodes with a prefix without a hash tag, naming LIFEGUARD_REDIS_KEY_PREFIX', () => {
    assert.throws(
      () =>
        resolveStackOptions(
          { keyPrefix: 'lifeguard', redisTopology: { clusterNodes: '127.0.0.1:7000' } },
          {},
        ),
      (error: unknown) => {
        assert.ok(error instanceof StackConfigurationError);
        assert.match(
          error.message,
          /LIFEGUARD_REDIS_KEY_PREFIX \(startStack options\): must hold a \{hash tag\}/,
        );
        return true;
      },
    );
  });
});
