import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import { bedsClosedAfterTests, type EvacuationBed } from './support/evacuation-bed.ts';

const bed = bedsClosedAfterTests();

/** The owner deletes a server through Nova's API (`DELETE /servers/{id}` → 204), as a user would. */
async function deleteServer(test: EvacuationBed, id: string): Promise<void> {
  const response = await fetch(`${test.sim.urls.compute}/servers/${id}`, {
    method: 'DELETE',
    headers: { 'x-auth-token': 'admin:admin' },
  });
  assert.equal(response.status, 204);
}

/** Waits until the server's evacuation is under way in cloud-sim (its migration listed, not ended). */
async function evacuationUnderWay(test: EvacuationBed, id: string): Promise<void> {
  await waitFor(
    `the evacuation of ${id} to be under way`,
    () => test.sim.model.migrations.ofInstance(id).some((each) => each.status === 'pre-migrating'),
    10_000,
    20,
  );
}

for (const [mode, instanceHa] of [
  ['SMART_EVACUATION', { SMART_EVACUATION: 'true' }],
  ['ORCHESTRATED_RESTART', { ORCHESTRATED_RESTART: 'true' }],
  ['traditional mode', {}],
] as const) {
  describe(`a server its owner deletes during its evacuation (${mode})`, () => {
    it('is reported skipped (deleted), not failed, and the host is evacuated, before EVACUATION_TIMEOUT', async () => {
      const test = await bed({
        instanceHa: { ...instanceHa, EVACUATION_TIMEOUT: '8' },
        cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 3000 } } },
      });
      const kept = test.sim.addServer({ host: 'compute1', name: 'db-03' });
      const deleted = test.sim.addServer({ host: 'compute1', name: 'web-03' });
      const started = Date.now();
      const { jobId, incident } = await test.failHost('compute1');
      await evacuationUnderWay(test, deleted.id);
      await deleteServer(test, deleted.id);
      const { result, failedReason } = await test.hostJobOutcome(jobId);
      assert.equal(result?.outcome, 'evacuated', failedReason ?? JSON.stringify(test.events.events));
      assert.deepEqual(result?.evacuatedInstances, [kept.id]);
      assert.deepEqual(result?.failedInstances, []);
      assert.ok(Date.now() - started < 8000, 'ended before EVACUATION_TIMEOUT (8 s)');
      assert.equal(test.events.of('instance.evacuation.failed').length, 0);
      assert.equal(test.events.of('host.evacuation.failed').length, 0);
      const skipped = test.events.of('instance.evacuation.skipped');
      assert.equal(skipped.length, 1);
      assert.deepEqual(
        {
          instanceId: skipped[0]!.data.instanceId,
          instanceName: skipped[0]!.data.instanceName,
          reason: skipped[0]!.data.reason,
          incidentId: skipped[0]!.data.incidentId,
        },
        { instanceId: deleted.id, instanceName: 'web-03', reason: 'deleted', incidentId: incident.id },
      );
      assert.equal(test.messages(`${deleted.id} (web-03) of compute1 was deleted`).length, 1);
      assert.equal((await test.incidents.get(incident.id))?.state, 'evacuated');
      assert.match((await test.service('compute1')).disabled_reason ?? '', /^lifeguard evacuation complete/);
    });
  });
}
