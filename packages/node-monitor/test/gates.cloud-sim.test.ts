import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IncidentId } from '@lifeguard/contracts';
import { aggregateLimitGate, readGateSnapshot } from '@lifeguard/instance-ha';
import { hostDownEvidence, waitFor } from '@lifeguard/testing';
import { scenario } from './support/cloud-sim-scenario.ts';

const hostsNamed = (count: number) => Array.from({ length: count }, (_, index) => `compute${index + 1}`);

describe('the gate chain end to end against cloud-sim (docs/instance-ha-rules.md#service-categorisation to #evacuable-tags)', () => {
  it('THRESHOLD: 4 nodes with 2 failed = 50% → allowed, two host.down', async () => {
    const cloud = await scenario({ hosts: 4 });
    try {
      await cloud.kill('compute1', 'compute2');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns().sort(), ['compute1', 'compute2']);
      assert.equal(cloud.published('threshold.exceeded').length, 0);
    } finally {
      await cloud.close();
    }
  });

  it('THRESHOLD: 3 nodes with 2 failed = 66.7% → blocked, threshold.exceeded and no host.down', async () => {
    const cloud = await scenario({ hosts: 3 });
    try {
      await cloud.kill('compute1', 'compute2');
      const report = await cloud.run();
      assert.deepEqual(cloud.hostDowns(), []);
      const [exceeded] = cloud.published('threshold.exceeded');
      assert.deepEqual(
        [exceeded?.scope, exceeded?.impacted, exceeded?.total, exceeded?.threshold],
        ['global', 2, 3, 50],
      );
      assert.ok(Math.abs(exceeded!.percent - 66.667) < 0.01);
      assert.equal(report.decision.stoppedBy, 'threshold');
      assert.equal((await cloud.incidents.listOpen()).length, 0, 'no incident is opened');
    } finally {
      await cloud.close();
    }
  });

  it('THRESHOLD sees a partition whole on its first poll although its hosts cross DELTA over several polls (silent hosts count as impacted)', async () => {
    // Six of ten hosts are cut off together, but their last reports were spread over the report
    // interval: at this poll three are older than DELTA (failed) and three not yet (Nova still says
    // up). InstanceHA's formula sees 3 of 10 = 30 % and fences those three; the partition is 60 %.
    const partition = async (suspectAge: number) => {
      const cloud = await scenario({
        hosts: 10,
        serviceDownTimeSeconds: 60,
        config: { DELTA: 10, THRESHOLD: 50, THRESHOLD_SUSPECT_AGE: suspectAge },
      });
      const now = Date.now();
      cloud.sim.partition(hostsNamed(6));
      hostsNamed(6).forEach((host, index) => {
        cloud.sim.model.host(host).frozenHeartbeat = now - (index < 3 ? 12_000 : 7_000);
      });
      return cloud;
    };

    const guarded = await partition(0);
    try {
      assert.equal(guarded.config.thresholdSuspectAgeSeconds, 5, 'DELTA ÷ 2 by default');
      const report = await guarded.run();
      assert.deepEqual(guarded.hostDowns(), [], 'nothing admitted');
      const [exceeded] = guarded.published('threshold.exceeded');
      assert.deepEqual([exceeded?.impacted, exceeded?.total], [6, 10]);
      assert.deepEqual(
        exceeded?.hosts.sort(),
        hostsNamed(3).sort(),
        'the three failed hosts are the ones held',
      );
      assert.deepEqual(
        exceeded?.impactedHosts?.toSorted(),
        hostsNamed(6).sort(),
        'every host counted is listed, the silent ones too: impacted 6 lists 6 (regression: it listed only the held)',
      );
      assert.equal(report.decision.stoppedBy, 'threshold');
    } finally {
      await guarded.close();
    }

    // The same poll with suspect counting out of reach (THRESHOLD_SUSPECT_AGE above DELTA) is
    // InstanceHA's formula: the first three are admitted — the gap this rule closes.
    const unguarded = await partition(300);
    try {
      await unguarded.run();
      assert.deepEqual(unguarded.hostDowns().sort(), hostsNamed(3).sort());
    } finally {
      await unguarded.close();
    }
  });

  it('THRESHOLD: 40 nodes with 20 down = 50% → allowed', async () => {
    const cloud = await scenario({ hosts: 40, config: { MAX_HOSTS_PER_CYCLE: 20 } });
    try {
      await cloud.kill(...hostsNamed(20));
      await cloud.run();
      assert.equal(cloud.hostDowns().length, 20);
    } finally {
      await cloud.close();
    }
  });

  it('publishes host.down with a stable incident, the evidence and the fencing token, once per failure', async () => {
    const cloud = await scenario({ hosts: 4, token: 42 });
    try {
      await cloud.kill('compute3');
      await cloud.run();
      const [event] = cloud.published('host.down');
      assert.equal(IncidentId.safeParse(event?.incidentId).success, true);
      assert.equal(event?.fencingToken, 42);
      assert.deepEqual(
        [
          event?.evidence.state,
          event?.evidence.status,
          event?.evidence.forcedDown,
          event?.resume,
          event?.kdumpFenced,
        ],
        ['down', 'enabled', false, false, false],
      );
      assert.ok(event!.evidence.ageSeconds! >= 0);
      await cloud.run();
      await cloud.run();
      assert.equal(cloud.hostDowns().length, 1, 'the open incident de-duplicates later cycles');
      const incident = await cloud.incidents.getOpenIncident('compute3');
      assert.deepEqual([incident?.id, incident?.publishCount], [event?.incidentId, 1]);
    } finally {
      await cloud.close();
    }
  });

  it('drops hosts without servers (never fenced)', async () => {
    const cloud = await scenario({ hosts: 5, serversPerHost: 0 });
    try {
      cloud.sim.model.addServer({ host: 'compute1' });
      await cloud.kill('compute1', 'compute2');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1']);
      const blocked = cloud.published('admission.blocked').find((event) => event.gate === 'not-evacuable');
      assert.deepEqual(blocked?.hosts, ['compute2']);
    } finally {
      await cloud.close();
    }
  });

  it('TAGGED_AGGREGATES fails closed: with no tagged aggregate no host is admitted', async () => {
    const cloud = await scenario({ hosts: 5, config: { TAGGED_AGGREGATES: true } });
    try {
      cloud.sim.model.addAggregate('untagged').hosts.push('compute1');
      await cloud.kill('compute1');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), []);
      assert.equal(cloud.published('admission.blocked')[0]?.gate, 'not-evacuable');
    } finally {
      await cloud.close();
    }
  });

  it('TAGGED_AGGREGATES admits only hosts of an evacuable aggregate, and THRESHOLD counts only those hosts', async () => {
    const cloud = await scenario({ hosts: 6, config: { TAGGED_AGGREGATES: true } });
    try {
      const rack = cloud.sim.model.addAggregate('rack1');
      rack.metadata.evacuable = 'true';
      rack.hosts.push('compute1', 'compute2', 'compute3', 'compute4');
      await cloud.kill('compute1', 'compute5');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1']);
      assert.match(cloud.logs.text, /Threshold: 1\/4 impacted = 25\.0%/);
    } finally {
      await cloud.close();
    }
  });

  it('per-aggregate instanceha:max_failures blocks that aggregate only', async () => {
    const cloud = await scenario({ hosts: 8, config: { TAGGED_AGGREGATES: true } });
    try {
      const strict = cloud.sim.model.addAggregate('strict');
      Object.assign(strict.metadata, { evacuable: 'true', 'instanceha:max_failures': '1' });
      strict.hosts.push('compute1', 'compute2', 'compute3');
      const loose = cloud.sim.model.addAggregate('loose');
      loose.metadata.evacuable = 'true';
      loose.hosts.push('compute4', 'compute5', 'compute6', 'compute7', 'compute8');
      await cloud.kill('compute1', 'compute2', 'compute4');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute4']);
      const [trip] = cloud.published('threshold.exceeded');
      assert.deepEqual(
        [trip?.scope, trip?.aggregate, trip?.impacted, trip?.threshold],
        ['aggregate', 'strict', 2, 1],
      );
    } finally {
      await cloud.close();
    }
  });

  it("instanceha:max_failures counts a failed host G5 dropped (nothing to evacuate), as the fencing worker's re-check counts it on the same world", async () => {
    const cloud = await scenario({
      hosts: 6,
      serversPerHost: 0,
      config: { TAGGED_AGGREGATES: true, THRESHOLD: 100 },
    });
    try {
      const rack = cloud.sim.model.addAggregate('rack');
      Object.assign(rack.metadata, { evacuable: 'true', 'instanceha:max_failures': '1' });
      rack.hosts.push('compute1', 'compute2', 'compute3');
      cloud.sim.model.addServer({ host: 'compute1' });
      await cloud.kill('compute1', 'compute2');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), [], 'compute2 is down too: 2 impacted > max 1');
      const [trip] = cloud.published('threshold.exceeded');
      assert.deepEqual([trip?.aggregate, trip?.impacted, trip?.hosts], ['rack', 2, ['compute1']]);
      const { snapshot } = await readGateSnapshot({
        compute: cloud.compute,
        incidents: cloud.incidents,
        heartbeatTimes: null,
        config: cloud.config,
      });
      assert.equal(aggregateLimitGate.judge(snapshot, 'compute1').verdict, 'defer', 'the re-check agrees');
    } finally {
      await cloud.close();
    }
  });

  it('an open failed-fence incident of a host that is back up and reporting does not count toward instanceha:max_failures', async () => {
    const cloud = await scenario({ hosts: 6, config: { TAGGED_AGGREGATES: true } });
    try {
      const rack = cloud.sim.model.addAggregate('rack');
      Object.assign(rack.metadata, { evacuable: 'true', 'instanceha:max_failures': '1' });
      rack.hosts.push('compute1', 'compute2', 'compute3');
      // compute2's fence failed earlier and it came back: its incident is still open (failed).
      const healed = await cloud.incidents.openIncident({
        host: 'compute2',
        serviceId: 'service-of-compute2',
        fencingToken: 1,
        kdumpFenced: false,
        evidence: hostDownEvidence('service-of-compute2'),
      });
      await cloud.incidents.setState(healed.incident.id, 'failed');
      await cloud.kill('compute1');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1'], 'compute2 is up and reporting: 1 impacted of max 1');
      assert.equal(cloud.published('threshold.exceeded').length, 0);
    } finally {
      await cloud.close();
    }
  });

  it('reads tagged images on every page of the image list and counts image properties (InstanceHA read page 1, tags only)', async () => {
    const cloud = await scenario({ hosts: 6, serversPerHost: 0 });
    try {
      const { model } = cloud.sim;
      const cirros = [...model.images.values()][0]!;
      cirros.tags.push('evacuable');
      for (let index = 0; index < 30; index++) model.addImage({ name: `filler-${index}` });
      const byProperty = model.addImage({ name: 'ha-by-property', properties: { evacuable: 'true' } });
      const plain = model.addImage({ name: 'plain' });
      model.addServer({ host: 'compute1', imageId: cirros.id });
      model.addServer({ host: 'compute2', imageId: byProperty.id });
      model.addServer({ host: 'compute3', imageId: plain.id });
      await cloud.kill('compute1', 'compute2', 'compute3');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns().sort(), ['compute1', 'compute2']);
      const blocked = cloud.published('admission.blocked').find((event) => event.gate === 'not-evacuable');
      assert.deepEqual(blocked?.hosts, ['compute3']);
    } finally {
      await cloud.close();
    }
  });

  it('reads flavor extra specs: a composite key containing the tag with value TRUE marks a server evacuable', async () => {
    const cloud = await scenario({ hosts: 6, serversPerHost: 0 });
    try {
      const { model } = cloud.sim;
      model.addFlavor({ id: 'ha', name: 'm1.ha', extraSpecs: { 'trait:CUSTOM_evacuable': 'TRUE' } });
      model.addServer({ host: 'compute1', flavorId: 'ha' });
      model.addServer({ host: 'compute2', flavorId: '1' });
      await cloud.kill('compute1', 'compute2');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1']);
    } finally {
      await cloud.close();
    }
  });

  it('MAX_HOSTS_PER_CYCLE defers the rest to the next cycle', async () => {
    const cloud = await scenario({ hosts: 10, config: { MAX_HOSTS_PER_CYCLE: 2 } });
    try {
      await cloud.kill('compute1', 'compute2', 'compute3');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1', 'compute2']);
      assert.deepEqual(cloud.published('admission.blocked')[0], {
        gate: 'rate-limit',
        hosts: ['compute3'],
        reason: 'MAX_HOSTS_PER_CYCLE 2: 1 host(s) deferred',
      });
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1', 'compute2', 'compute3']);
    } finally {
      await cloud.close();
    }
  });

  it('DISABLED stops before admission, but recovery requests still go out', async () => {
    const cloud = await scenario({ hosts: 6, config: { DISABLED: true } });
    try {
      Object.assign(cloud.sim.model.host('compute6'), {
        disabled: true,
        forcedDown: true,
        disabledReason: 'instanceha evacuation complete: 2026-07-28T09:00:00+00:00',
      });
      await cloud.kill('compute1');
      const report = await cloud.run();
      assert.deepEqual(cloud.hostDowns(), []);
      assert.equal(report.decision.stoppedBy, 'disabled');
      assert.match(cloud.logs.text, /lifeguard DISABLED is true, not evacuating/);
      assert.equal(cloud.published('admission.blocked')[0]?.gate, 'disabled');
      assert.deepEqual(report.recoveryRequested, ['compute6']);
    } finally {
      await cloud.close();
    }
  });

  it('holds everything when no nova-scheduler is up; a failed scheduler query proceeds', async () => {
    const cloud = await scenario({ hosts: 6 });
    try {
      await cloud.kill('compute1');
      const schedulers = await (
        await fetch(`${cloud.sim.urls.compute}/os-services?binary=nova-scheduler`, {
          headers: { 'x-auth-token': 'admin:admin', 'x-openstack-nova-api-version': '2.73' },
        })
      ).json();
      const allDown = {
        services: (schedulers as { services: Array<Record<string, unknown>> }).services.map((each) => ({
          ...each,
          state: 'down',
        })),
      };
      cloud.sim.injectResponse({
        status: 200,
        body: JSON.stringify(allDown),
        contentType: 'application/json',
        pathPrefix: '/compute/v2.1/os-services?binary=nova-scheduler',
      });
      const report = await cloud.run();
      assert.equal(report.decision.stoppedBy, 'scheduler-down');
      assert.deepEqual(cloud.hostDowns(), []);
      cloud.sim.injectResponse({
        status: 500,
        body: '<html>oops</html>',
        contentType: 'text/html',
        pathPrefix: '/compute/v2.1/os-services?binary=nova-scheduler',
        count: 5,
      });
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1']);
    } finally {
      await cloud.close();
    }
  });

  it('skips the cycle when every active service looks failed (≥ 3 active), naming the hosts and counting only active ones, and keeps it for lifeguard status', async () => {
    // Three enabled hosts and a disabled (reserved) one, all silent.
    const cloud = await scenario({ hosts: 4, config: { THRESHOLD: 100 } });
    try {
      await cloud.compute.updateService(
        (await cloud.compute.listServices({ binary: 'nova-compute', host: 'compute4' }))[0]!.id,
        { status: 'disabled', disabled_reason: 'reserved' },
      );
      await cloud.kill('compute1', 'compute2', 'compute3', 'compute4');
      const report = await cloud.run();
      assert.equal(report.decision.stoppedBy, 'all-services-stale');
      assert.deepEqual(cloud.hostDowns(), []);
      assert.match(cloud.logs.text, /CRITICAL: all 3 active compute services look failed/);
      const [blocked] = cloud.published('admission.blocked');
      assert.deepEqual(blocked!.hosts.toSorted(), ['compute1', 'compute2', 'compute3']);
      assert.match(blocked!.reason, /^all 3 active compute services look failed \(3 past DELTA, 0 silent/);
      const summary = await cloud.admissionSummaries.read();
      assert.equal(summary?.stoppedBy, 'all-services-stale');
      assert.deepEqual(
        summary?.blocked.map((each) => each.gate),
        ['all-services-stale'],
      );
      const staleNow = async () => (await cloud.metrics.allServicesStaleNow.get()).values[0]?.value;
      assert.equal(await staleNow(), 1, 'lifeguard_all_services_stale while it lasts');
      for (const host of ['compute1', 'compute2', 'compute3', 'compute4']) cloud.sim.reviveHost(host);
      await waitFor('the services up again', () =>
        ['compute1', 'compute2', 'compute3'].every((host) =>
          cloud.sim.model.serviceIsUp(cloud.sim.model.host(host)),
        ),
      );
      assert.equal((await cloud.run()).decision.stoppedBy, null);
      assert.equal(await staleNow(), 0, 'back to 0 at the first poll that is not stopped by it');
    } finally {
      await cloud.close();
    }
  });

  it('logs and skips service records Nova could not fully describe; the cycle goes on', async () => {
    const cloud = await scenario({ hosts: 5 });
    try {
      await cloud.kill('compute1');
      const listing = (await (
        await fetch(`${cloud.sim.urls.compute}/os-services?binary=nova-compute`, {
          headers: { 'x-auth-token': 'admin:admin', 'x-openstack-nova-api-version': '2.73' },
        })
      ).json()) as { services: Array<Record<string, unknown>> };
      listing.services.push(
        { binary: 'nova-compute', host: 'cell2-compute-0', status: 'UNKNOWN' },
        {
          id: 'b3c7a1e2-0000-4000-8000-000000000001',
          binary: 'nova-compute',
          host: 'cell2-compute-1',
          status: 'UNKNOWN',
        },
      );
      cloud.sim.injectResponse({
        status: 200,
        body: JSON.stringify(listing),
        contentType: 'application/json',
        pathPrefix: '/compute/v2.1/os-services?binary=nova-compute',
      });
      const report = await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute1']);
      assert.equal(report.skipped, 1);
      assert.match(cloud.logs.text, /a service record that does not fit the schema was left out/);
      assert.match(
        cloud.logs.text,
        /compute service record skipped: status \\"UNKNOWN\\", state missing, forced_down missing/,
      );
    } finally {
      await cloud.close();
    }
  });

  it('resumes a host InstanceHA fenced and marked (switch-over), opening an incident with resume: true', async () => {
    const cloud = await scenario({ hosts: 6 });
    try {
      await cloud.kill('compute2');
      Object.assign(cloud.sim.model.host('compute2'), {
        disabled: true,
        forcedDown: true,
        disabledReason: 'instanceha evacuation (kdump): 2026-07-28T09:18:12.345678+00:00',
      });
      await cloud.run();
      const [event] = cloud.published('host.down');
      assert.deepEqual([event?.host, event?.resume, event?.kdumpFenced], ['compute2', true, true]);
      assert.equal((await cloud.incidents.getOpenIncident('compute2'))?.resume, true);
    } finally {
      await cloud.close();
    }
  });

  it("leaves an operator's forced_down on an enabled host alone: no recovery request", async () => {
    const cloud = await scenario({ hosts: 4 });
    try {
      cloud.sim.model.host('compute4').forcedDown = true;
      const report = await cloud.run();
      assert.deepEqual(report.recoveryRequested, []);
      assert.deepEqual(cloud.hostDowns(), []);
      assert.match(cloud.logs.text, /enabled host forced down outside lifeguard: left alone/);
    } finally {
      await cloud.close();
    }
  });

  it('CHECK_HEARTBEAT: a host whose OS still sends heartbeats is not fenced (only nova-compute died); a silent one is', async () => {
    const cloud = await scenario({ hosts: 6, config: { CHECK_HEARTBEAT: true } });
    try {
      for (const host of cloud.sim.model.hosts.keys())
        if (host !== 'compute2') await cloud.heartbeats.record(host);
      await cloud.kill('compute1', 'compute2');
      await cloud.run();
      assert.deepEqual(cloud.hostDowns(), ['compute2']);
      assert.deepEqual(
        cloud.published('admission.blocked').find((event) => event.gate === 'host-reachable')?.hosts,
        ['compute1'],
      );
      assert.match(
        cloud.logs.text,
        /Fencing decision: 2 stale, 1 heartbeat-alive, 1 to fence, cliff=false \(candidates: THRESHOLD and the later gates decide\)/,
      );
      assert.equal((await cloud.metrics.hostReachable.get()).values[0]?.value, 1);
    } finally {
      await cloud.close();
    }
  });

  it('CHECK_HEARTBEAT: a heartbeat cliff holds fencing for HEARTBEAT_CLIFF_MAX_CYCLES cycles, then accepts the loss once the hosts stayed silent for MASS_EVENT_HOLD_DOWN', async () => {
    let clock = new Date();
    const cloud = await scenario({
      hosts: 10,
      config: {
        CHECK_HEARTBEAT: true,
        HEARTBEAT_CLIFF_MAX_CYCLES: 2,
        THRESHOLD: 100,
        MASS_EVENT_HOLD_DOWN: 5,
      },
      now: () => clock,
    });
    try {
      for (const host of cloud.sim.model.hosts.keys()) await cloud.heartbeats.record(host);
      await cloud.run();
      const lost = ['compute1', 'compute2', 'compute3', 'compute4', 'compute5', 'compute6'];
      // their heartbeats stop arriving
      await cloud.redis.hdel(`${cloud.prefix}:node-monitor:heartbeat:last`, ...lost);
      await cloud.kill(...lost);
      const first = await cloud.run();
      assert.deepEqual(cloud.hostDowns(), [], 'held back: suspected observer partition');
      assert.equal(first.decision.heartbeat?.cliff, true);
      assert.deepEqual(
        cloud.published('admission.blocked').find((event) => event.gate === 'heartbeat-cliff')?.hosts,
        lost,
      );
      const second = await cloud.run();
      assert.equal(second.decision.heartbeat?.cliffExpired, true);
      assert.deepEqual(cloud.hostDowns(), [], 'the cliff is over: held MASS_EVENT_HOLD_DOWN from now');
      assert.deepEqual(
        cloud.published('admission.blocked').find((event) => event.gate === 'mass-event-hold-down')?.hosts,
        lost,
      );
      clock = new Date(clock.getTime() + 5_000);
      await cloud.run();
      assert.deepEqual(cloud.hostDowns().sort(), lost);
    } finally {
      await cloud.close();
    }
  });
});
