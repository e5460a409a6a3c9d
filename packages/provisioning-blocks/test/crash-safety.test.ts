import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import {
  completeFromTwoConnections,
  EventCollector,
  seedBlockedPorts,
  serviceProcessSuite,
  waitForEveryPortActive,
} from './support.ts';

const PORTS = 1000;

/**
 * SIGKILL in the middle of a stream of completions: nothing acknowledged before its Redis effect,
 * the outbox keeps events the dead relay had not confirmed, so after a restart every port that should
 * be ACTIVE is, and every port's provisioning.complete was published at least once.
 */
describe('crash safety', () => {
  const suite = serviceProcessSuite('crash');
  const prefix = suite.keyPrefix('crash');

  it('a service killed (SIGKILL) mid-stream and restarted leaves every port ACTIVE and every event published at least once', async () => {
    const { vhost, redis } = suite;
    const { stores, ids } = await seedBlockedPorts(redis, prefix, PORTS, 30);
    // Bound before the first completion, so it sees every event ever published.
    const collector = await EventCollector.start(vhost.url, 'test.crash.events', [
      'provisioning.complete.port',
    ]);
    const environment = (instance: string) => ({
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_INSTANCE_NAME: instance,
      LIFEGUARD_PROVISIONING_RPC_SERVER: 'crash-host',
      LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
      LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
    });
    const first = suite.start(environment('crash-first'));
    await first.started();
    let killedAfter = -1;
    try {
      await completeFromTwoConnections(vhost.url, ids, {
        chunk: 50,
        beforeChunk: async (sent) => {
          if (killedAfter >= 0 || sent < PORTS / 2) return;
          // Half the completions are sent: wait until the service is visibly at work, then kill it.
          await waitFor('some ports completed', () => collector.events.length >= 50, 30_000, 10);
          killedAfter = collector.events.length;
          await first.kill();
        },
      });
    } finally {
      await first.kill();
    }
    assert.ok(killedAfter >= 50 && killedAfter < PORTS, `killed after ${killedAfter} events`);
    assert.equal(first.child.signalCode, 'SIGKILL');

    const second = suite.start(environment('crash-second'));
    await second.started();
    await waitForEveryPortActive('every port ACTIVE after the restart', redis, stores, ids);
    await waitFor(
      'an event for every port',
      () => new Set(collector.of('provisioning.complete').map((event) => event.data.objectId)).size === PORTS,
      30_000,
    );
    await waitFor('the outbox drained', async () => (await redis.xlen(stores.keys.outbox)) === 0, 30_000);
    const published = collector.of('provisioning.complete');
    assert.ok(
      published.length >= PORTS,
      `${published.length} events for ${PORTS} ports (duplicates allowed)`,
    );
    const blocked = await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')));
    assert.ok(
      blocked.every((each) => !each),
      'no block left',
    );
    second.child.kill('SIGTERM');
    assert.equal((await second.exited()).code, 0);
    await collector.close();
  });
});
