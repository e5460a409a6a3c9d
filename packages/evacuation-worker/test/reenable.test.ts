import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createEvent, EVENTS_EXCHANGE, eventRoutingKey } from '@lifeguard/contracts';
import { formatDisabledReason, KdumpStore } from '@lifeguard/instance-ha';
import {
  AmqpClient,
  createLogger,
  declareEventsTopology,
  eventMessageOptions,
  leaseTokenKey,
  nodeMonitorLeaderKey,
} from '@lifeguard/runtime';
import {
  createTestVhost,
  hostDownEvidence,
  issueFencingToken,
  type TestVhost,
  takeDeadLetterReasons,
  waitFor,
} from '@lifeguard/testing';
import type { ReenableJobResult } from '../src/index.ts';
import { bedsClosedAfterTests, type EvacuationBed } from './support/evacuation-bed.ts';
import { addReenableJob as addJob, reenableResult } from './support/reenable-jobs.ts';

const closers: Array<() => Promise<void>> = [];
// Registered before the beds' hook, so the queues close before the beds do.
after(async () => {
  for (const close of closers) await close().catch(() => undefined);
});
const bed = bedsClosedAfterTests();

/** Adds a `reenable` job as the recovery intake would (its queue closed after the tests). */
async function addReenableJob(...args: Parameters<typeof addJob>): ReturnType<typeof addJob> {
  const added = await addJob(...args);
  closers.push(() => added.queue.close());
  return added;
}

/** Adds a `reenable` job as the recovery intake would, and waits for its result. */
async function reenable(
  test: EvacuationBed,
  host: string,
  incidentId: string | null,
  beforeAdding: () => void = () => undefined,
): Promise<ReenableJobResult> {
  const { queue, jobId } = await addReenableJob(test, host, incidentId, { beforeAdding });
  return reenableResult(queue, jobId);
}

/** Evacuates compute1 (one instance) and returns its incident. */
async function evacuateCompute1(test: EvacuationBed, options: { kdump?: boolean } = {}) {
  test.sim.addServer({ host: 'compute1' });
  const { jobId, incident } = await test.failHost('compute1', options);
  const { result } = await test.hostJobOutcome(jobId);
  assert.equal(result?.outcome, 'evacuated');
  return incident;
}

describe('re-enable after an evacuation (docs/instance-ha-rules.md#re-enable)', () => {
  it('retries while Nova refuses to lift forced_down (`done` migrations until the host restarted), then enables the service once it reports up', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true' },
      cloud: { model: { bootMilliseconds: 1500 } },
    });
    const incident = await evacuateCompute1(test);
    const result = await reenable(test, 'compute1', incident.id);
    assert.equal(result.outcome, 'reenabled');
    assert.ok(test.messages('Could not unset force-down for compute1').length >= 1, 'Nova refused at first');
    const service = await test.service('compute1');
    assert.equal(service.status, 'enabled');
    assert.equal(service.forced_down, false);
    assert.equal(service.state, 'up');
    assert.equal(test.events.of('host.reenabled').length, 1);
    assert.equal((await test.incidents.get(incident.id))?.state, 'closed');
  });

  it('finishes a re-enable whose worker died after enabling the service: host.reenabled is published and the incident closed', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const incident = await evacuateCompute1(test);
    assert.equal((await test.incidents.get(incident.id))?.state, 'evacuated');
    // What an attempt killed right after its `{"status": "enabled"}` left behind: the host back,
    // forced_down lifted and the service enabled in Nova, no host.reenabled, the incident open.
    test.sim.reviveHost('compute1');
    const host = test.sim.model.host('compute1');
    Object.assign(host, { forcedDown: false, disabled: false, disabledReason: null });
    const result = await reenable(test, 'compute1', incident.id);
    assert.equal(result.outcome, 'reenabled');
    assert.deepEqual(
      test.events.of('host.reenabled').map((event) => event.data.incidentId),
      [incident.id],
      'host.reenabled published once, for the incident',
    );
    assert.equal((await test.incidents.get(incident.id))?.state, 'closed');
  });

  it('LEAVE_DISABLED leaves an evacuated host disabled and forced down', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true', LEAVE_DISABLED: 'true' } });
    const incident = await evacuateCompute1(test);
    const result = await reenable(test, 'compute1', incident.id);
    assert.equal(result.outcome, 'left-disabled');
    const service = await test.service('compute1');
    assert.equal(service.status, 'disabled');
    assert.equal(service.forced_down, true);
    assert.equal(test.events.of('host.reenabled').length, 0);
  });

  it('waits until 60 s after the last kdump packet of a kdump-fenced host', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const incident = await evacuateCompute1(test, { kdump: true });
    test.sim.reviveHost('compute1'); // the host rebooted out of its crash kernel
    const lastPacket = new Date(Date.now() - 58_500);
    const kdump = new KdumpStore(test.redis, test.prefix);
    await kdump.recordPacket('compute1', lastPacket);
    const result = await reenable(test, 'compute1', incident.id);
    assert.equal(result.outcome, 'reenabled');
    const unset = test.logs.records().find((record) => record.msg === 'Unset forced_down of compute1');
    assert.ok(unset, 'forced_down was lifted');
    assert.ok(
      Date.parse(String(unset.time)) >= lastPacket.getTime() + 60_000,
      'not before the quiet period ended',
    );
    assert.ok(test.messages('its last kdump packet arrived less than 60 s ago').length >= 1);
    assert.equal(await kdump.lastPacketAt('compute1'), null, 'kdump state forgotten');
  });

  it('looks again later when Nova answers an error during a check, instead of failing', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const incident = await evacuateCompute1(test);
    const result = await reenable(test, 'compute1', incident.id, () =>
      test.sim.injectResponse({
        status: 500,
        body: '<html><body>Internal Server Error</body></html>',
        contentType: 'text/html',
        pathPrefix: '/compute/v2.1/os-services',
        count: 2,
      }),
    );
    assert.equal(result.outcome, 'reenabled');
    assert.ok(
      test.messages('Re-enable of compute1 interrupted by an error; looking again later').length >= 1,
    );
  });

  it('never undoes an operator’s own forced_down', async () => {
    const test = await bed({});
    const service = await test.service('compute2');
    await test.nova.updateService(service.id, { forced_down: true });
    const result = await reenable(test, 'compute2', null);
    assert.equal(result.outcome, 'not-a-candidate');
    assert.equal((await test.service('compute2')).forced_down, true);
  });
});

describe('FORCE_ENABLE and evacuations still in progress', () => {
  /** compute1 marked complete while one evacuation from it is still being rebuilt elsewhere. */
  async function hostWithEvacuationInProgress(test: EvacuationBed) {
    test.sim.setEvacuationTiming({ rebuildMilliseconds: 60_000 });
    const server = test.sim.addServer({ host: 'compute1' });
    test.sim.killHost('compute1');
    const service = await test.service('compute1');
    await test.nova.updateService(service.id, { forced_down: true });
    await test.nova.evacuate(server.id);
    await test.nova.updateService(service.id, {
      status: 'disabled',
      disabled_reason: formatDisabledReason({ kind: 'complete' }),
    });
    await waitFor('the evacuation to be pre-migrating', () =>
      test.sim.model.migrations
        .ofInstance(server.id)
        .some((migration) => migration.status === 'pre-migrating'),
    );
  }

  it('waits while an evacuation from the host is in progress', async () => {
    const test = await bed({});
    await hostWithEvacuationInProgress(test);
    await addReenableJob(test, 'compute1', null, { disabledReason: null });
    await waitFor(
      'two checks',
      () =>
        test.messages('Not re-enabling compute1 yet: 1 evacuation(s) from it still in progress').length >= 2,
    );
    assert.equal((await test.service('compute1')).forced_down, true);
  });

  it('FORCE_ENABLE skips that check and lifts forced_down', async () => {
    const test = await bed({ instanceHa: { FORCE_ENABLE: 'true' } });
    await hostWithEvacuationInProgress(test);
    await addReenableJob(test, 'compute1', null, { disabledReason: null });
    await waitFor(
      'forced_down to be lifted',
      async () => (await test.service('compute1')).forced_down === false,
    );
  });
});

describe('recovery intake', () => {
  let vhost: TestVhost;

  it('turns host.recovery.requested events into one re-enable per host, drops a stale leader’s and dead-letters one with a token never issued', async () => {
    vhost = await createTestVhost('evacuation-recovery');
    closers.push(() => vhost.delete());
    const test = await bed({});
    const logger = createLogger({ service: 'test', level: 'silent' });
    const amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'evacuation-test',
      service: 'test',
      logger,
    });
    closers.push(() => amqp.close());
    await amqp.declare(declareEventsTopology);
    await test.startWorker({}, amqp);
    // compute2 was forced down by lifeguard in an incident (fenced), and is enabled again by a person.
    const service = await test.service('compute2');
    const { incident } = await test.incidents.openIncident({
      host: 'compute2',
      serviceId: service.id,
      fencingToken: 5,
      kdumpFenced: false,
      evidence: hostDownEvidence(service.id),
    });
    await test.incidents.recordFence(incident.id, {
      proof: 'operator-confirmed',
      method: 'operator',
      at: new Date().toISOString(),
      by: 'ops',
      note: null,
    });
    await test.nova.updateService(service.id, { forced_down: true });
    const publish = async (fencingToken: number) => {
      const event = createEvent(
        'host.recovery.requested',
        {
          host: 'compute2',
          serviceId: service.id,
          incidentId: incident.id,
          fencingToken,
          status: 'enabled',
          state: 'down',
          forcedDown: true,
          disabledReason: null,
        },
        { service: 'node-monitor', instance: 'test' },
      );
      await amqp.publish(
        EVENTS_EXCHANGE,
        eventRoutingKey(event),
        Buffer.from(JSON.stringify(event)),
        eventMessageOptions(event),
      );
    };
    // A request with a token the leader lease never issued (99) is dead-lettered and raises nothing.
    await issueFencingToken(test.redis, leaseTokenKey(nodeMonitorLeaderKey(test.prefix)), 7);
    await publish(99);
    const reasons: string[] = [];
    await waitFor('the unissued token dead-lettered', async () => {
      reasons.push(...(await takeDeadLetterReasons(amqp)));
      return reasons.length > 0;
    });
    assert.deepEqual(reasons, ['fencing token 99 was never issued by the leader lease (highest issued: 7)']);
    await publish(7);
    await publish(7);
    await waitFor('compute2 re-enabled', () => test.events.of('host.reenabled').length === 1, 20_000);
    assert.equal((await test.service('compute2')).forced_down, false);
    await publish(3);
    await waitFor(
      'the stale request to be dropped',
      () =>
        test.messages('Dropping a recovery request for compute2 from a stale node-monitor leader').length ===
        1,
    );
  });

  it('dead-letters, with its reason and a warning, a request naming an incident that does not exist or is another host’s, and still accepts one without an incident', async () => {
    const forgedVhost = await createTestVhost('evacuation-recovery-forged');
    closers.push(() => forgedVhost.delete());
    const test = await bed({});
    const logger = createLogger({ service: 'test', level: 'silent' });
    const amqp = await AmqpClient.connect({
      url: forgedVhost.url,
      connectionName: 'evacuation-test',
      service: 'test',
      logger,
    });
    closers.push(() => amqp.close());
    await amqp.declare(declareEventsTopology);
    await test.startWorker({}, amqp);
    await issueFencingToken(test.redis, leaseTokenKey(nodeMonitorLeaderKey(test.prefix)), 7);
    const compute1 = await test.service('compute1');
    const compute2 = await test.service('compute2');
    // compute1 has an incident of its own; compute2 was forced down by an operator, with no incident.
    const { incident } = await test.incidents.openIncident({
      host: 'compute1',
      serviceId: compute1.id,
      fencingToken: 5,
      kdumpFenced: false,
      evidence: hostDownEvidence(compute1.id),
    });
    await test.nova.updateService(compute2.id, { forced_down: true });
    const publish = async (serviceId: string, incidentId: string | null) => {
      const event = createEvent(
        'host.recovery.requested',
        {
          host: 'compute2',
          serviceId,
          incidentId,
          fencingToken: 7,
          status: 'enabled',
          state: 'down',
          forcedDown: true,
          disabledReason: null,
        },
        { service: 'node-monitor', instance: 'test' },
      );
      await amqp.publish(
        EVENTS_EXCHANGE,
        eventRoutingKey(event),
        Buffer.from(JSON.stringify(event)),
        eventMessageOptions(event),
      );
    };
    const missing = '00000000-0000-4000-8000-000000000000';
    await publish(compute2.id, missing);
    await publish(compute2.id, incident.id);
    const reasons: string[] = [];
    await waitFor('both forged requests dead-lettered', async () => {
      reasons.push(...(await takeDeadLetterReasons(amqp)));
      return reasons.length >= 2;
    });
    assert.deepEqual(
      reasons.sort(),
      [
        `incident ${incident.id} belongs to host compute1, not compute2`,
        `incident ${missing} of host compute2 does not exist`,
      ].sort(),
    );
    const warnings = test.logs
      .records()
      .filter((record) => record.level === 40)
      .map((record) => String(record.msg));
    for (const reason of reasons) {
      assert.ok(
        warnings.some((warning) => warning.includes(reason)),
        `a warning names: ${reason}`,
      );
    }
    assert.equal(test.events.of('host.reenabled').length, 0);
    // A request without an incident (an operator's forced_down) is not refused: it reaches the re-enable
    // rules, which leave an operator's forced_down alone.
    await publish(compute2.id, null);
    await waitFor(
      'the request without an incident checked by the re-enable rules',
      () => test.messages('Not re-enabling compute2: forced_down was not set by lifeguard').length === 1,
    );
    assert.deepEqual(await takeDeadLetterReasons(amqp), []);
  });
});
