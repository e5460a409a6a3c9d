import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bedsClosedAfterTests } from './support/evacuation-bed.ts';

const bed = bedsClosedAfterTests();

describe('SMART_EVACUATION against cloud-sim', () => {
  it('evacuates only ACTIVE, ERROR and SHUTOFF instances, restores SHUTOFF and ERROR, then reports the host evacuated', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const active = test.sim.addServer({ host: 'compute1', name: 'active' });
    const stopped = test.sim.addServer({ host: 'compute1', name: 'stopped', vmState: 'stopped' });
    const broken = test.sim.addServer({ host: 'compute1', name: 'broken', vmState: 'error' });
    const paused = test.sim.addServer({ host: 'compute1', name: 'paused', vmState: 'paused' });
    const { jobId, incident } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.deepEqual(new Set(result?.evacuatedInstances), new Set([active.id, stopped.id, broken.id]));
    const [a, s, e, p] = test.servers([active.id, stopped.id, broken.id, paused.id]);
    assert.notEqual(a!.host, 'compute1');
    assert.equal(a!.vmState, 'active');
    assert.notEqual(s!.host, 'compute1');
    assert.equal(s!.vmState, 'stopped');
    assert.notEqual(e!.host, 'compute1');
    assert.equal(e!.vmState, 'error');
    assert.equal(p!.host, 'compute1', 'a PAUSED instance is never evacuated');
    assert.equal(test.sim.evacuateCalls(paused.id), 0);
    for (const server of [a!, s!, e!]) assert.equal(server.locked, false, `${server.name} is unlocked`);
    const evacuated = test.events.of('host.evacuated');
    assert.equal(evacuated.length, 1);
    assert.equal(evacuated[0]!.data.poweredOn, true);
    assert.deepEqual(test.powerOnRequests, ['compute1']);
    const service = await test.service('compute1');
    assert.match(
      service.disabled_reason ?? '',
      new RegExp(`^lifeguard evacuation complete: .* incident=${incident.id.replaceAll('.', '\\.')}$`),
    );
    assert.equal(service.forced_down, true, 'the host stays forced down until the re-enable path');
    assert.equal((await test.incidents.get(incident.id))?.state, 'evacuated');
    assert.equal(test.messages('Evacuation accepted for').length, 3);
    assert.equal(
      test.messages("Nova's resume_guests_state_on_host_boot must be false in nova.conf").length,
      1,
      'the start-up reminder, once',
    );
    assert.match(test.messages(`Evacuation accepted for ${active.id}`)[0]!, /\(nova-req: req-[0-9a-f-]+\)$/);
  });

  it("carries out an operator's os-stop asked for after the host died: the server lands SHUTOFF, and the log says so", async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const stopAsked = test.sim.addServer({ host: 'compute1', name: 'stop-asked' });
    const untouched = test.sim.addServer({ host: 'compute1', name: 'untouched' });
    test.sim.killHost('compute1');
    await test.nova.stopServer(stopAsked.id);
    assert.equal(test.servers([stopAsked.id])[0]!.taskState, 'powering-off', 'the dead host never stops it');
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    const [stopped, running] = test.servers([stopAsked.id, untouched.id]);
    assert.notEqual(stopped!.host, 'compute1');
    assert.equal(stopped!.vmState, 'stopped', 'the os-stop is not undone');
    assert.equal(running!.vmState, 'active');
    assert.equal(
      test.messages(
        `Instance ${stopAsked.id} (stop-asked) of compute1 is ACTIVE with task_state powering-off: a power action asked for after its host died; it will be SHUTOFF once evacuated`,
      ).length,
      1,
    );
  });
});

describe('which instances, against cloud-sim', () => {
  it('never evacuates servers matching a SKIP_SERVERS_WITH_NAME glob', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true', SKIP_SERVERS_WITH_NAME: 'scratch-*,tmp?' },
    });
    const kept = test.sim.addServer({ host: 'compute1', name: 'db-1' });
    const scratch = test.sim.addServer({ host: 'compute1', name: 'scratch-7' });
    const temporary = test.sim.addServer({ host: 'compute1', name: 'tmp1' });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.deepEqual(result?.evacuatedInstances, [kept.id]);
    assert.equal(test.sim.evacuateCalls(scratch.id), 0);
    assert.equal(test.sim.evacuateCalls(temporary.id), 0);
    assert.equal(test.servers([scratch.id])[0]!.host, 'compute1');
  });

  it('never evacuates servers excluded by project, tag, metadata or their own evacuable=false, and says why', async () => {
    const test = await bed({
      instanceHa: {
        SMART_EVACUATION: 'true',
        // A project id, and a project name Keystone resolves (GET /v3/projects?name=).
        SKIP_SERVERS_IN_PROJECT: 'octavia-project,trove-service',
        SKIP_SERVERS_WITH_TAG: 'amphora,router',
        SKIP_SERVERS_WITH_METADATA: 'ha-owner=trove',
      },
    });
    const kept = test.sim.addServer({ host: 'compute1', name: 'web-1' });
    const byProject = test.sim.addServer({ host: 'compute1', name: 'lb-1', tenantId: 'octavia-project' });
    const trove = test.sim.identity.addProject('trove-service');
    const byProjectName = test.sim.addServer({ host: 'compute1', name: 'trove-1', tenantId: trove.id });
    const byTag = test.sim.addServer({ host: 'compute1', name: 'r-1', tags: ['router'] });
    const byMetadata = test.sim.addServer({
      host: 'compute1',
      name: 'db-1',
      metadata: { 'ha-owner': 'trove' },
    });
    const ownWish = test.sim.addServer({
      host: 'compute1',
      name: 'pinned',
      metadata: { evacuable: 'False' },
    });
    const paused = test.sim.addServer({ host: 'compute1', name: 'paused-1', vmState: 'paused' });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.deepEqual(result?.evacuatedInstances, [kept.id]);
    for (const server of [byProject, byProjectName, byTag, byMetadata, ownWish, paused]) {
      assert.equal(test.sim.evacuateCalls(server.id), 0, server.name);
      assert.equal(test.servers([server.id])[0]!.host, 'compute1', server.name);
    }
    const skipped = new Map(
      test.events.of('instance.evacuation.skipped').map((event) => [event.data.instanceId, event.data]),
    );
    assert.deepEqual(
      [byProject, byProjectName, byTag, byMetadata, ownWish, paused].map(
        (server) => skipped.get(server.id)?.reason,
      ),
      ['project', 'project', 'tag', 'metadata', 'evacuable-false', 'status'],
    );
    assert.equal(
      skipped.get(byProjectName.id)?.detail,
      `project ${trove.id} ("trove-service") is in SKIP_SERVERS_IN_PROJECT`,
    );
    assert.equal(skipped.get(byTag.id)?.detail, 'tag "router" is in SKIP_SERVERS_WITH_TAG');
    assert.equal(skipped.get(byMetadata.id)?.detail, 'metadata ha-owner=trove (SKIP_SERVERS_WITH_METADATA)');
    assert.equal(skipped.has(kept.id), false);
  });

  it('evacuates only instances whose image or flavor is tagged evacuable once anything is tagged', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const image = test.sim.model.addImage({ name: 'ha-image', tags: ['evacuable'] });
    test.sim.model.addFlavor({ id: 'ha', name: 'm1.ha', extraSpecs: { 'trait:CUSTOM_evacuable': 'true' } });
    const byImage = test.sim.addServer({ host: 'compute1', name: 'by-image', imageId: image.id });
    const byFlavor = test.sim.addServer({ host: 'compute1', name: 'by-flavor', flavorId: 'ha' });
    const untagged = test.sim.addServer({ host: 'compute1', name: 'untagged' });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.deepEqual(new Set(result?.evacuatedInstances), new Set([byImage.id, byFlavor.id]));
    assert.equal(test.sim.evacuateCalls(untagged.id), 0);
  });

  it('reports nothing to evacuate for a host with no evacuable instance, and still powers it on', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    test.sim.addServer({ host: 'compute1', name: 'shelved', vmState: 'shelved_offloaded' });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'nothing-to-evacuate');
    assert.deepEqual(test.powerOnRequests, ['compute1']);
    assert.equal(test.events.of('host.evacuated').length, 1);
  });
});

describe('SMART_EVACUATION failures', () => {
  it('re-issues a failing evacuation until EVACUATION_RETRIES (5) failures, then marks the host FAILED and starts no other instance', async () => {
    const test = await bed({
      instanceHa: { SMART_EVACUATION: 'true', EVACUATION_MAX_THREADS: '1', WORKERS: '1' },
    });
    for (const name of ['one', 'two', 'three']) test.sim.addServer({ host: 'compute1', name });
    // Nova lists the newest first: the first listed instance is evacuated first, and fails.
    const [failing, ...others] = await test.nova.listServers({ host: 'compute1', allTenants: true });
    assert.ok(failing && others.length === 2);
    test.sim.failEvacuations([failing.id], 'failed');
    const { jobId, incident } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'failed');
    assert.equal(test.sim.evacuateCalls(failing.id), 5);
    for (const other of others)
      assert.equal(test.sim.evacuateCalls(other.id), 0, 'the rest of the host is left alone');
    assert.deepEqual(
      new Set(result?.failedInstances),
      new Set([failing.id, ...others.map((other) => other.id)]),
    );
    const failed = test.events.of('instance.evacuation.failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.data.attempts, 5);
    assert.match(failed[0]!.data.reason, /evacuation failed 5 times \(EVACUATION_RETRIES 5\)/);
    assert.equal(test.events.of('host.evacuation.failed').length, 1);
    assert.equal(test.events.of('host.evacuated').length, 0);
    const service = await test.service('compute1');
    assert.match(service.disabled_reason ?? '', /^lifeguard evacuation FAILED: /);
    assert.equal(service.forced_down, true);
    assert.equal(service.status, 'disabled');
    assert.deepEqual(test.powerOnRequests, [], 'a failed host is not powered on');
    assert.equal((await test.incidents.get(incident.id))?.state, 'failed');
    assert.equal(test.servers([failing.id])[0]!.locked, false, 'unlocked after failing');
  });

  it("does not send again an evacuation Nova found no valid host for, and quotes Nova's fault", async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const servers = ['a', 'b'].map((name) => test.sim.addServer({ host: 'compute1', name }));
    // Room went away after the fence: every other host disabled, as an operator draining the cloud.
    for (const host of ['compute2', 'compute3', 'compute4']) {
      const service = await test.service(host);
      await test.nova.updateService(service.id, { status: 'disabled', disabled_reason: 'maintenance' });
    }
    const { jobId, incident } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'failed');
    const failed = test.events.of('instance.evacuation.failed');
    assert.ok(failed.length >= 1);
    for (const event of failed) {
      assert.equal(event.data.attempts, 1, 'one evacuate, not EVACUATION_RETRIES');
      assert.equal(
        event.data.reason,
        'evacuation migration error: Nova says "No valid host was found. There are not enough hosts available."; not retried: no compute host can take it until an operator makes room',
      );
    }
    for (const server of servers) assert.ok(test.sim.evacuateCalls(server.id) <= 1, server.name);
    assert.equal((await test.incidents.get(incident.id))?.state, 'failed');
  });

  it('succeeds when an evacuation fails fewer than EVACUATION_RETRIES times', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const flaky = test.sim.addServer({ host: 'compute1', name: 'flaky' });
    // A rebuild that fails on its destination is retried (a NoValidHost is not: see the test above).
    test.sim.failEvacuations([flaky.id], 'failed', 2);
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.equal(test.sim.evacuateCalls(flaky.id), 3);
    assert.notEqual(test.servers([flaky.id])[0]!.host, 'compute1');
  });
});

describe('ORCHESTRATED_RESTART', () => {
  it('evacuates priority phases in descending order, each after the previous one finished', async () => {
    const test = await bed({ instanceHa: { ORCHESTRATED_RESTART: 'true' } });
    const add = (name: string, metadata: Record<string, string>) =>
      test.sim.addServer({ host: 'compute1', name, metadata });
    const web = [
      add('web-1', { 'instanceha:restart_group': 'web', 'instanceha:restart_priority': '100' }),
      add('web-2', { 'instanceha:restart_group': 'web' }),
    ];
    const database = [
      add('db-1', { 'instanceha:restart_group': 'db', 'instanceha:restart_priority': '900' }),
      add('db-2', { 'instanceha:restart_group': 'db', 'instanceha:restart_priority': '10' }),
    ];
    const cache = [add('cache', { 'instanceha:restart_priority': '700' })];
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    // db (900) → cache (700) → web (max 500: web-2 has the default)
    const phases = [database, cache, web];
    const created = (servers: typeof web) =>
      servers.map((server) => test.sim.model.migrations.ofInstance(server.id)[0]!.createdAt);
    for (let index = 1; index < phases.length; index++) {
      const previousLast = Math.max(...created(phases[index - 1]!));
      const nextFirst = Math.min(...created(phases[index]!));
      assert.ok(
        nextFirst - previousLast >= 150,
        `phase ${index + 1} started ${nextFirst - previousLast} ms after phase ${index}: after its rebuild`,
      );
    }
  });
});

describe('traditional mode', () => {
  it('succeeds each child on accept but reports the host evacuated only once every instance is ACTIVE elsewhere', async () => {
    const test = await bed({
      cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 1500 } } },
    });
    const servers = [
      test.sim.addServer({ host: 'compute1' }),
      test.sim.addServer({ host: 'compute1', vmState: 'stopped' }),
    ];
    const { jobId } = await test.failHost('compute1');
    const { result, failedReason } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated', failedReason ?? JSON.stringify(test.events.events));
    const evacuated = test.events.of('host.evacuated')[0]!;
    for (const server of test.servers(servers.map((each) => each.id))) {
      assert.notEqual(server.host, 'compute1');
      assert.equal(server.taskState, null);
      assert.equal(server.locked, false);
    }
    assert.equal(test.servers([servers[1]!.id])[0]!.vmState, 'stopped');
    const lastDone =
      Math.max(...servers.map((server) => test.sim.model.migrations.ofInstance(server.id)[0]!.createdAt)) +
      1500;
    assert.ok(
      Date.parse(evacuated.occurredAt) >= lastDone,
      'host.evacuated came after the rebuilds finished',
    );
    assert.equal(test.events.of('instance.evacuated').length, 2);
  });

  it("retries an evacuate that Nova answered 503 past the client's own retries, instead of failing the instance", async () => {
    const test = await bed({});
    const server = test.sim.addServer({ host: 'compute1', name: 'unavailable-then-fine' });
    // The server's next 8 actions meet 503 Service Unavailable: the lock before the evacuate (4
    // attempts; a lock that fails is logged and the evacuation goes on) and the evacuate (4 attempts).
    test.sim.injectResponse({
      status: 503,
      body: JSON.stringify({ computeFault: { code: 503, message: 'Service Unavailable' } }),
      contentType: 'application/json',
      pathPrefix: `/compute/v2.1/servers/${server.id}/action`,
      count: 8,
    });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.deepEqual(result?.failedInstances, []);
    assert.equal(test.sim.evacuateCalls(server.id), 1, 'one evacuate reached Nova');
    assert.notEqual(test.servers([server.id])[0]!.host, 'compute1');
    assert.equal(test.events.of('instance.evacuation.failed').length, 0, 'no failure announced');
  });

  it('keeps a lock someone else set on a server, with its reason, in traditional and smart mode', async () => {
    for (const instanceHa of [{ SMART_EVACUATION: 'false' }, { SMART_EVACUATION: 'true' }]) {
      const test = await bed({ instanceHa });
      const held = test.sim.addServer({ host: 'compute1', name: 'operator-locked' });
      const plain = test.sim.addServer({ host: 'compute1', name: 'not-locked' });
      Object.assign(test.servers([held.id])[0]!, { locked: true, lockedReason: 'operator: do not touch' });
      const { jobId } = await test.failHost('compute1');
      const { result } = await test.hostJobOutcome(jobId);
      assert.equal(result?.outcome, 'evacuated', JSON.stringify(instanceHa));
      const [heldNow, plainNow] = test.servers([held.id, plain.id]);
      assert.notEqual(heldNow!.host, 'compute1', 'the locked server was evacuated');
      assert.deepEqual(
        [heldNow!.locked, heldNow!.lockedReason],
        [true, 'operator: do not touch'],
        "the operator's lock and reason are still there",
      );
      assert.equal(plainNow!.locked, false, "lifeguard's own lock was lifted");
    }
  });

  it('lifts the lock an InstanceHA evacuation left (locked_reason instanceha-evacuation) once it has evacuated the server, in traditional and smart mode', async () => {
    for (const instanceHa of [{ SMART_EVACUATION: 'false' }, { SMART_EVACUATION: 'true' }]) {
      const test = await bed({ instanceHa });
      const left = test.sim.addServer({ host: 'compute1', name: 'instanceha-locked' });
      Object.assign(test.servers([left.id])[0]!, { locked: true, lockedReason: 'instanceha-evacuation' });
      const { jobId } = await test.failHost('compute1');
      const { result } = await test.hostJobOutcome(jobId);
      assert.equal(result?.outcome, 'evacuated', JSON.stringify(instanceHa));
      const [leftNow] = test.servers([left.id]);
      assert.notEqual(leftNow!.host, 'compute1', 'evacuated');
      assert.deepEqual(
        [leftNow!.locked, leftNow!.lockedReason],
        [false, null],
        'the evacuation lock is lifted',
      );
    }
  });

  it('marks the host FAILED when Nova refuses an evacuate, and still evacuates the others', async () => {
    const test = await bed({});
    const refused = test.sim.addServer({ host: 'compute1', name: 'refused' });
    const fine = test.sim.addServer({ host: 'compute1', name: 'fine' });
    test.sim.failEvacuations([refused.id], 'error');
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'failed');
    assert.deepEqual(result?.failedInstances, [refused.id]);
    assert.equal(test.sim.evacuateCalls(refused.id), 1, 'traditional mode sends one evacuate');
    assert.notEqual(test.servers([fine.id])[0]!.host, 'compute1');
    assert.match((await test.service('compute1')).disabled_reason ?? '', /^lifeguard evacuation FAILED/);
  });
});

describe('host outcome', () => {
  it('does not power on a kdump-fenced host and writes the kdump complete marker', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    test.sim.addServer({ host: 'compute1' });
    const { jobId } = await test.failHost('compute1', { kdump: true });
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.deepEqual(test.powerOnRequests, []);
    assert.equal(test.events.of('host.evacuated')[0]!.data.poweredOn, false);
    assert.match(
      (await test.service('compute1')).disabled_reason ?? '',
      /^lifeguard evacuation complete \(kdump\): /,
    );
  });

  it('reports the instances recovered and the host waiting for a person to power it on when its BMC is unreachable at power-on', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const { jobId, incident } = await test.failHost('compute1');
    // The fence went through; the BMC stops answering before the power-on.
    test.sim.setBmcQuirks('compute1', { unreachable: true });
    const { result, failedReason } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated', failedReason ?? undefined);
    assert.deepEqual(result?.evacuatedInstances, [server.id]);
    assert.deepEqual(result?.failedInstances, []);
    assert.deepEqual(test.powerOnRequests, ['compute1']);
    assert.equal(test.sim.model.host('compute1').poweredOn, false);
    assert.equal(test.events.of('host.evacuation.failed').length, 0);
    const powerOnFailed = test.events.of('host.power-on.failed');
    assert.equal(powerOnFailed.length, 1);
    assert.deepEqual(powerOnFailed[0]!.data, {
      host: 'compute1',
      incidentId: incident.id,
      evacuatedInstances: [server.id],
      reason: 'the BMC of compute1 is unreachable',
    });
    const evacuated = test.events.of('host.evacuated');
    assert.equal(evacuated.length, 1);
    assert.equal(evacuated[0]!.data.poweredOn, false);
    assert.equal((await test.incidents.get(incident.id))?.state, 'evacuated');
    assert.match((await test.service('compute1')).disabled_reason ?? '', /^lifeguard evacuation complete: /);
    const alerts = test.logs.records().filter((record) => record.alert === true);
    assert.deepEqual(
      alerts.map((record) => record.msg),
      [
        `ALERT: the 1 instance(s) of compute1 were evacuated, but powering compute1 on failed (the BMC of compute1 is unreachable): a person must power compute1 on; it is re-enabled once its nova-compute reports again`,
      ],
    );
    assert.equal(test.messages('FAILED').length, 0, 'nothing says the evacuation failed');
  });

  it('waits DELAY seconds before the first evacuate', async () => {
    const test = await bed({ instanceHa: { SMART_EVACUATION: 'true', DELAY: '2' } });
    const server = test.sim.addServer({ host: 'compute1' });
    const { jobId } = await test.failHost('compute1');
    const started = Date.now();
    await test.hostJobOutcome(jobId);
    const evacuated = test.sim.model.migrations.ofInstance(server.id)[0]!.createdAt;
    assert.ok(evacuated - started >= 1900, `first evacuate ${evacuated - started} ms after the hand-over`);
  });
});
