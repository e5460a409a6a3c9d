// Instance HA end to end on real Nova (Zed, the project's harness): a compute host hangs, lifeguard's
// node monitor reports it down, the fencing worker fences it through the real fence_ipmilan against
// an ipmi_sim BMC whose chassis power-off SIGKILLs that host's nova-compute — so fencing has a real
// effect: the hung process is gone afterwards — then forces it down and disables it in Nova; the
// evacuation worker evacuates every server to a surviving compute and, once they are ACTIVE there,
// has the host powered on (its nova-compute starts again) and re-enabled.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import { waitFor } from '@lifeguard/testing';
import { assertSequence, describeTimeline } from './support/event-timeline.ts';
import { processState, realNova } from './support/real-nova.ts';
import { RealNovaDeployment } from './support/real-nova-deployment.ts';

describe('Instance HA end to end on real Nova (fence_ipmilan against ipmi_sim, the hung compute SIGKILLed)', {
  timeout: 400_000,
}, () => {
  const nova = realNova();
  const victim = nova.hosts[nova.hosts.length - 1]!;
  const survivors = nova.hosts.filter((host) => host !== victim);
  const servers: string[] = [];
  let deployment: RealNovaDeployment;

  before(async () => {
    await nova.restore();
    const tag = randomUUID().slice(0, 6);
    servers.push(
      ...(await nova.bootEach([0, 1, 2].map((index) => [`e2e-iha-${tag}-${index}`, victim] as const))),
    );
    deployment = await RealNovaDeployment.start({ label: 'e2e-iha-nova', fencing: 'ipmi' });
  });

  after(async () => {
    try {
      await deployment?.stop();
    } finally {
      await nova.deleteServers(servers);
      await nova.restore();
    }
  });

  it('a hung compute is fenced (its process SIGKILLed by the BMC), forced down and disabled; every server ends ACTIVE on a surviving compute; the host is powered on and re-enabled', async (t) => {
    const { timeline } = deployment;
    const bmc = deployment.bmcs.get(victim)!;
    const hungPid = await nova.computePid(victim);
    assert.ok(hungPid !== null, `${victim}'s nova-compute runs`);
    const hungAt = Date.now();
    await nova.signalCompute(victim, 'STOP');
    assert.equal(processState(hungPid), 'T', 'the compute is hung (stopped), not dead');

    const down = await timeline.waitFor('host.down', (event) => event.data.host === victim, 60_000);
    const incidentId = down.data.incidentId;
    const fenced = await timeline.waitFor(
      'host.fenced',
      (event) => event.data.incidentId === incidentId,
      60_000,
    );
    assert.deepEqual([fenced.data.proof, fenced.data.method], ['power-off-confirmed', 'fence_ipmilan']);
    assert.ok(
      [null, 'Z'].includes(processState(hungPid)),
      'fencing killed the hung nova-compute (gone, or a zombie not yet reaped)',
    );
    assert.deepEqual(bmc.powerCommands().slice(0, 1), ['0'], 'the BMC was told to power off');

    const evacuated = await timeline.waitFor(
      'host.evacuated',
      (event) => event.data.incidentId === incidentId,
      120_000,
    );
    const evacuatedAt = Date.parse(evacuated.occurredAt);
    for (const id of servers) {
      const server = await nova.server(id);
      assert.equal(server.status, 'ACTIVE', `${server.name} is ACTIVE`);
      assert.ok(
        survivors.includes(server['OS-EXT-SRV-ATTR:host'] ?? ''),
        `${server.name} runs on a surviving compute, not ${server['OS-EXT-SRV-ATTR:host']}`,
      );
    }
    assert.deepEqual([...evacuated.data.evacuatedInstances].sort(), [...servers].sort());
    const migrations = (
      await nova.nova('GET', `/os-migrations?migration_type=evacuation&source_compute=${victim}`)
    ).body.migrations as Array<{ instance_uuid: string; status: string; created_at: string }>;
    for (const id of servers) {
      const own = migrations.filter((migration) => migration.instance_uuid === id);
      assert.equal(own.length, 1, 'one evacuation per server');
    }

    const reenabled = await timeline.waitFor(
      'host.reenabled',
      (event) => event.data.incidentId === incidentId,
      180_000,
    );
    // The host as the node monitor saw it when it first asked for the re-enable (before the
    // re-enable changed anything): still forced down and disabled, with this incident's complete
    // marker. Read from the event, not from Nova afterwards: the re-enable may already have begun.
    const [firstRequest] = timeline
      .forIncident(incidentId)
      .filter((event) => event.type === 'host.recovery.requested');
    assert.ok(firstRequest?.type === 'host.recovery.requested', 'a re-enable was requested');
    assert.deepEqual([firstRequest.data.forcedDown, firstRequest.data.status], [true, 'disabled']);
    const marker = parseDisabledReason(firstRequest.data.disabledReason);
    assert.deepEqual([marker.kind, marker.incidentId], ['complete', incidentId]);
    const events = timeline
      .forIncident(incidentId)
      .filter((event) => event.type !== 'host.recovery.requested');
    for (const line of describeTimeline(events, hungAt)) t.diagnostic(`after the hang: ${line}`);
    assertSequence(events, [
      'host.down',
      'host.fenced',
      'host.evacuation.started',
      'host.powered-on',
      'host.evacuated',
      'host.reenabled',
    ]);
    assert.ok(Date.parse(reenabled.occurredAt) >= evacuatedAt);
    assert.match(bmc.powerCommands().join(','), /^0(,0)*,1$/, 'powered off (retries allowed), then on once');
    const restarted = await nova.computePid(victim);
    assert.ok(restarted !== null && restarted !== hungPid, 'powering on started a new nova-compute');
    await waitFor(
      `${victim} up, enabled, not forced down`,
      async () => {
        const service = await nova.service(victim);
        return service.state === 'up' && service.status === 'enabled' && !service.forced_down;
      },
      60_000,
      500,
    );
    for (const migration of (
      await nova.nova('GET', `/os-migrations?migration_type=evacuation&source_compute=${victim}`)
    ).body.migrations as Array<{ instance_uuid: string; status: string }>) {
      if (servers.includes(migration.instance_uuid)) assert.equal(migration.status, 'completed');
    }
  });
});
