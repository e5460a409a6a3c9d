import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { type HostRecheck, recheckHost, sharedWorldRead } from '../src/index.ts';
import { bedsClosedAfterTests, type EvacuationBed } from './support/evacuation-bed.ts';

// The re-checks of every host share one read of the world (the compute services, the open incidents)
// while it is in flight: never a read that had ended before a caller asked, never a failed one again.

const bed = bedsClosedAfterTests();
const logger = createLogger({ service: 'shared-world-read-test', level: 'silent' });
const SERVICES = '/compute/v2.1/os-services';

/**
 * Two fenced hosts of six, and a re-check of either that reads the world through one shared read.
 * `holdUntilAsked(n)`: the next compute-services listing is answered only once n re-checks have
 * asked for the world, so they surely ask while that read is under way, however loaded the machine.
 */
async function setUp() {
  const test = await bed({ inProcessWorker: false, cloud: { hosts: 6 } });
  const one = (await test.failHost('compute1', { addJob: false })).incident;
  const two = (await test.failHost('compute2', { addJob: false })).incident;
  let asked = 0;
  let holdUntil = 0;
  const compute: typeof test.nova = Object.create(test.nova, {
    listServices: {
      value: async (...args: Parameters<typeof test.nova.listServices>) => {
        await waitFor('the re-checks to ask for the world', () => asked >= holdUntil, 30_000, 5);
        return test.nova.listServices(...args);
      },
    },
  });
  const world = { compute, incidents: test.incidents, config: test.config, heartbeats: null };
  const shared = sharedWorldRead(world);
  const readWorld = () => {
    asked += 1;
    return shared();
  };
  const recheck = (host: string, incidentId: string): Promise<HostRecheck> =>
    recheckHost({ ...world, thresholdCheck: true, logger, readWorld }, { host, incidentId });
  const holdUntilAsked = (count: number) => {
    asked = 0;
    holdUntil = count;
  };
  const servicesReads = () =>
    test.sim.requests.matching((request) => request.url.startsWith(SERVICES)).length;
  return { test, one, two, recheck, holdUntilAsked, servicesReads };
}

/** compute2 is back: its nova-compute runs again and a person lifted forced_down. */
async function hostBack(test: EvacuationBed, host: string): Promise<void> {
  test.sim.reviveHost(host);
  const service = await test.service(host);
  await test.nova.updateService(service.id, { forced_down: false });
  await waitFor(`${host} up`, async () => (await test.service(host)).state === 'up');
}

describe('sharedWorldRead: the re-checks of all hosts share a read of the world in flight', () => {
  it('answers the re-checks of two hosts that ask at once with one read, and reads again for a later one', async () => {
    const { test, one, two, recheck, holdUntilAsked, servicesReads } = await setUp();
    const before = servicesReads();
    holdUntilAsked(2);
    const answers = await Promise.all([recheck('compute1', one.id), recheck('compute2', two.id)]);
    assert.deepEqual(answers, [{ kind: 'go' }, { kind: 'go' }]);
    assert.equal(servicesReads() - before, 1, 'one read of the compute services for both hosts');
    holdUntilAsked(0);
    // The world changes after that read ended: the next re-check must see it, not the old read.
    await hostBack(test, 'compute2');
    const afterBack = servicesReads();
    const again = await recheck('compute2', two.id);
    assert.equal(servicesReads() - afterBack, 1, 'a new read: the finished one is never handed out');
    assert.equal(again.kind, 'refuse');
    assert.match(
      (again as { reason: string }).reason,
      /^the host is not down: compute2 reports to Nova: state up/,
    );
  });

  it('hands a failed read only to the re-checks that waited for it; the next one reads again', async () => {
    const { test, one, two, recheck, holdUntilAsked, servicesReads } = await setUp();
    const before = servicesReads();
    holdUntilAsked(2);
    // A 500 is not retried by the client, and only one answer is a 500: had each re-check read the
    // world itself, one of them would have gone on.
    test.sim.injectResponse({
      status: 500,
      body: JSON.stringify({ computeFault: { code: 500, message: 'database unavailable' } }),
      contentType: 'application/json',
      pathPrefix: SERVICES,
    });
    const failed = await Promise.allSettled([recheck('compute1', one.id), recheck('compute2', two.id)]);
    assert.deepEqual(
      failed.map((each) => each.status),
      ['rejected', 'rejected'],
    );
    for (const each of failed) {
      assert.match(String((each as PromiseRejectedResult).reason), /database unavailable/);
    }
    holdUntilAsked(0);
    assert.deepEqual(await recheck('compute1', one.id), { kind: 'go' });
    // The scripted answer is not in the record of handled requests: the one read counted is the new one.
    assert.equal(servicesReads() - before, 1, 'the failure was not kept: the next re-check read again');
  });
});
