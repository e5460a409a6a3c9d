// "Never claim success early", end to end: InstanceHA's default (traditional) mode reports a host
// evacuated as soon as Nova accepted the evacuate calls, before any instance is up. lifeguard, in the
// same traditional mode (SMART_EVACUATION false), reports `instance.evacuated` for an instance and
// `host.evacuated` for the host only once Nova shows every instance ACTIVE on another host. The
// cloud is made slow on purpose: each rebuild takes 4 s after Nova accepted the evacuation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeTimeline } from './support/event-timeline.ts';
import { SimulatedDeployment } from './support/simulated-deployment.ts';

const REBUILD_MILLISECONDS = 4000;

describe('host.evacuated is never claimed early (traditional mode, slow evacuations)', {
  timeout: 300_000,
}, () => {
  let deployment: SimulatedDeployment;

  before(async () => {
    deployment = await SimulatedDeployment.start({
      label: 'e2e-report',
      cloud: {
        hosts: 6,
        serversPerHost: 6,
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 4,
        bootMilliseconds: 500,
        evacuationAcceptMilliseconds: 0,
        evacuationRebuildMilliseconds: REBUILD_MILLISECONDS,
      },
      instanceHa: { POLL: '1', DELTA: '4', SMART_EVACUATION: 'false', RESERVED_HOSTS: 'false' },
    });
  });

  after(async () => {
    await deployment?.stop();
  });

  it('each instance.evacuated follows its instance turning ACTIVE elsewhere, and host.evacuated follows the last one, seconds after Nova accepted the evacuations', async (t) => {
    const { sim, timeline, recorder } = deployment;
    const source = deployment.layout.protectedHosts[1]!;
    const servers = sim.model.servers.onHost(source).filter((server) => deployment.evacuable(server));
    assert.equal(servers.length, 4, 'four evacuable servers (and two untagged) on the host');
    const killedAt = Date.now();
    sim.killHost(source);

    const down = await timeline.waitFor('host.down', (event) => event.data.host === source, 30_000);
    const evacuated = await timeline.waitFor(
      'host.evacuated',
      (event) => event.data.incidentId === down.data.incidentId,
      120_000,
    );
    recorder.sample();
    for (const line of describeTimeline(timeline.forIncident(down.data.incidentId), killedAt))
      t.diagnostic(`after the kill: ${line}`);

    assert.equal(evacuated.data.mode, 'traditional');
    assert.deepEqual(
      [...evacuated.data.evacuatedInstances].sort(),
      servers.map((server) => server.id).sort(),
    );
    const accepted = servers.map((server) => recorder.rebuildingAt(server.id));
    const active = servers.map((server) => recorder.activeElsewhere(server.id, source));
    assert.ok(
      accepted.every((at) => at !== null) && active.every((change) => change !== null),
      'every server was rebuilt and is ACTIVE elsewhere',
    );
    // `since`: the last look at the cloud that still saw the server elsewhere than ACTIVE.
    const lastAccepted = Math.max(...(accepted as number[]));
    const lastActive = Math.max(...active.map((change) => change!.since));
    const reportedAt = Date.parse(evacuated.occurredAt);
    assert.ok(
      reportedAt >= lastActive,
      `host.evacuated (${evacuated.occurredAt}) before the last instance was ACTIVE (${new Date(lastActive).toISOString()})`,
    );
    assert.ok(
      reportedAt - lastAccepted >= REBUILD_MILLISECONDS - 500,
      `host.evacuated came ${reportedAt - lastAccepted} ms after the last evacuation was accepted: it waited for the rebuilds`,
    );
    const perInstance = timeline
      .ofType('instance.evacuated')
      .filter((event) => event.data.incidentId === down.data.incidentId);
    assert.equal(perInstance.length, servers.length);
    for (const event of perInstance) {
      const activeSince = recorder.activeElsewhere(event.data.instanceId, source)!.since;
      assert.ok(
        Date.parse(event.occurredAt) >= activeSince,
        `instance.evacuated of ${event.data.instanceName} came before it was ACTIVE elsewhere`,
      );
      assert.notEqual(event.data.targetHost, source);
    }
    for (const server of servers) assert.equal(sim.evacuateCalls(server.id), 1, 'evacuated exactly once');
    await timeline.waitFor(
      'host.reenabled',
      (event) => event.data.incidentId === down.data.incidentId,
      60_000,
    );
  });
});
