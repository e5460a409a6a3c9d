import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { createEvent } from '@lifeguard/contracts';
import { IncidentStore } from '@lifeguard/instance-ha';
import { EventJournal } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import type { SimState } from '../src/queries/cloud-sim-control.ts';
import { lifeguard } from './support/cli-harness.ts';

describe('lifeguard sim', () => {
  let sim: CloudSim;
  let env: NodeJS.ProcessEnv;
  const prefix = randomKeyPrefix('cli-sim');
  const redis = testRedis();

  before(async () => {
    sim = await startCloudSim({ hosts: 5, servers: 10, redfishPort: false });
    env = { LIFEGUARD_CLOUD_SIM_URL: sim.urls.api, LIFEGUARD_REDIS_KEY_PREFIX: prefix };
  });
  after(async () => {
    await sim.close();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });
  const host = (name: string) => sim.hostStates().find((each) => each.host === name)!;

  it('status shows every simulated host as a table and as JSON', async () => {
    const run = await lifeguard(['sim', 'status'], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.equal(
      lines[0],
      `cloud-sim at ${sim.urls.control}: 5 hosts, 10 servers, 0 migrations (0 evacuations in flight)`,
    );
    assert.match(
      lines[1]!,
      /^HOST\s+STATE\s+STATUS\s+FORCED_DOWN\s+NOVA-COMPUTE\s+POWER\s+PARTITIONED\s+SERVERS$/,
    );
    assert.match(lines[2]!, /^compute1\s+up\s+enabled\s+false\s+running\s+On\s+false\s+2$/);
    assert.equal(lines.length, 7);
    const json = await lifeguard(['sim', 'status', '--json'], env);
    assert.deepEqual(
      json.json<SimState>().hosts.map((each) => each.host),
      ['compute1', 'compute2', 'compute3', 'compute4', 'compute5'],
    );
  });

  it('kill-host stops the nova-compute of that host only, and revive-host starts it again', async () => {
    const killed = await lifeguard(['sim', 'kill-host', 'compute3'], env);
    assert.equal(killed.code, 0, killed.stderr);
    assert.match(
      killed.stdout,
      /^nova-compute on compute3 killed: its heartbeats stopped; the machine stays on until fenced$/m,
    );
    assert.equal(host('compute3').computeRunning, false);
    assert.equal(host('compute3').powerState, 'On');
    assert.equal(host('compute2').computeRunning, true);
    const revived = await lifeguard(['sim', 'revive-host', 'compute3'], env);
    assert.equal(revived.code, 0, revived.stderr);
    assert.equal(revived.stdout, 'nova-compute on compute3 started\n');
    assert.equal(host('compute3').computeRunning, true);
  });

  it('partition <n> cuts off the first n running hosts; heal ends it', async () => {
    const run = await lifeguard(['sim', 'partition', '3', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.json(), { partitioned: ['compute1', 'compute2', 'compute3'] });
    assert.deepEqual(
      sim.hostStates().map((each) => each.partitioned),
      [true, true, true, false, false],
    );
    const more = await lifeguard(['sim', 'partition', '3'], env);
    assert.equal(more.code, 1, 'only two hosts are left to partition');
    assert.match(more.stderr, /cannot partition 3 host\(s\): only 2 of 5 are running and not partitioned/);
    const healOne = await lifeguard(['sim', 'heal', 'compute2'], env);
    assert.equal(healOne.stdout, 'healed compute2\n');
    assert.equal(host('compute2').partitioned, false);
    const healAll = await lifeguard(['sim', 'heal'], env);
    assert.equal(healAll.stdout, 'healed every partitioned host\n');
    assert.ok(sim.hostStates().every((each) => !each.partitioned));
    const chosen = await lifeguard(['sim', 'partition', '2', '--hosts', 'compute4', 'compute5'], env);
    assert.match(
      chosen.stdout,
      /^partitioned 2 host\(s\): compute4, compute5 \(end it with: lifeguard sim heal\)$/m,
    );
    await lifeguard(['sim', 'heal'], env);
  });

  it('an unknown host, a wrong count and an unreachable cloud-sim are reported clearly', async () => {
    const unknown = await lifeguard(['sim', 'kill-host', 'compute99'], env);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^lifeguard: cloud-sim refused POST \/hosts\/compute99\/kill \(HTTP 404\): no host named compute99$/m,
    );
    const mismatch = await lifeguard(['sim', 'partition', '3', '--hosts', 'compute1'], env);
    assert.equal(mismatch.code, 2);
    assert.match(mismatch.stderr, /--hosts names 1 host\(s\) but <count> is 3/);
    const zero = await lifeguard(['sim', 'partition', '0'], env);
    assert.equal(zero.code, 2);
    const away = await lifeguard(['sim', 'status', '--sim-url', 'http://127.0.0.1:1'], env);
    assert.equal(away.code, 1);
    assert.match(away.stderr, /^lifeguard: cloud-sim is not reachable at http:\/\/127\.0\.0\.1:1\/_sim: /m);
    assert.match(away.stderr, /LIFEGUARD_CLOUD_SIM_URL or --sim-url/);
  });

  it("kill-host --watch follows lifeguard's events about the host until it is evacuated and re-enabled", async () => {
    const journal = new EventJournal(redis, prefix);
    const source = { service: 'test', instance: 'test-1' };
    const watching = lifeguard(['sim', 'kill-host', 'compute4', '--watch', '30'], env);
    await waitFor('compute4 killed', () => !host('compute4').computeRunning);
    const incidentId = 'compute4.20261130T081502Z.abcd';
    // Another host's event is not shown.
    await journal.record(
      createEvent('host.powered-on', { host: 'compute1', incidentId: 'compute1.x', method: 'noop' }, source),
    );
    await journal.record(
      createEvent(
        'host.fenced',
        {
          host: 'compute4',
          incidentId,
          proof: 'power-off-confirmed',
          method: 'redfish',
          attempts: 1,
          durationSeconds: 1,
        },
        source,
      ),
    );
    await journal.record(
      createEvent(
        'host.evacuated',
        {
          host: 'compute4',
          incidentId,
          mode: 'smart',
          evacuatedInstances: ['a'],
          durationSeconds: 3,
          poweredOn: true,
        },
        source,
      ),
    );
    await journal.record(
      createEvent('host.reenabled', { host: 'compute4', serviceId: 'service-4', incidentId }, source),
    );
    const run = await watching;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^- waiting for compute4 to report again and be re-enabled$/m);
    assert.match(run.stdout, /^✔ \+\d+\.\d{3} s {2}host\.reenabled {2}serviceId=service-4$/m);
    assert.match(run.stdout, /^- waiting for lifeguard to act on compute4$/m);
    assert.match(
      run.stdout,
      /^✔ \+\d+\.\d{3} s {2}host\.fenced {2}proof=power-off-confirmed method=redfish attempts=1 durationSeconds=1$/m,
    );
    assert.match(run.stdout, /^✔ \+\d+\.\d{3} s {2}host\.evacuated {2}mode=smart evacuatedInstances=\[a\]/m);
    assert.doesNotMatch(run.stdout, /powered-on/);
    sim.reviveHost('compute4');
  });

  it('kill-host, revive-host and heal print JSON with --json, and say when there is nothing to do', async () => {
    const killed = await lifeguard(['sim', 'kill-host', 'compute1', '--json'], env);
    assert.equal(killed.code, 0, killed.stderr);
    assert.deepEqual(killed.json(), { host: 'compute1', killed: true });
    const again = await lifeguard(['sim', 'kill-host', 'compute1'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'nova-compute on compute1 is already down; nothing was changed\n');
    const againJson = await lifeguard(['sim', 'kill-host', 'compute1', '--json'], env);
    assert.deepEqual(againJson.json(), { host: 'compute1', killed: false, alreadyDown: true });
    const revived = await lifeguard(['sim', 'revive-host', 'compute1', '--json'], env);
    assert.deepEqual(revived.json(), { host: 'compute1', started: true });
    const running = await lifeguard(['sim', 'revive-host', 'compute1'], env);
    assert.equal(running.code, 0, running.stderr);
    assert.equal(running.stdout, 'nova-compute on compute1 already runs; nothing was changed\n');
    const runningJson = await lifeguard(['sim', 'revive-host', 'compute1', '--json'], env);
    assert.deepEqual(runningJson.json(), { host: 'compute1', started: false, alreadyRunning: true });
    assert.equal(host('compute1').computeRunning, true);

    await lifeguard(['sim', 'partition', '1', '--hosts', 'compute2'], env);
    const healed = await lifeguard(['sim', 'heal', 'compute2', '--json'], env);
    assert.equal(healed.code, 0, healed.stderr);
    assert.deepEqual(healed.json(), { healed: ['compute2'] });
    const healedAll = await lifeguard(['sim', 'heal', '--json'], env);
    assert.deepEqual(healedAll.json(), { healed: 'every partitioned host' });
    await lifeguard(['sim', 'partition', '1', '--hosts', 'compute2'], env);
    const unknown = await lifeguard(['sim', 'heal', 'compute2', 'compute99'], env);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /^lifeguard: cloud-sim refused POST \/heal \(HTTP 404\): unknown hosts: compute99$/m,
    );
    assert.equal(host('compute2').partitioned, true, 'the known host is not healed either');
    sim.heal();
  });

  it('kill-host --watch of a host with an open incident follows only a new incident, and a failed evacuation exits 1', async () => {
    const journal = new EventJournal(redis, prefix);
    const incidents = new IncidentStore(redis, prefix);
    const source = { service: 'test', instance: 'test-1' };
    const { incident: previous } = await incidents.openIncident({
      host: 'compute3',
      serviceId: 'service-3',
      fencingToken: 1,
      kdumpFenced: false,
      evidence: {
        serviceId: 'service-3',
        state: 'down',
        status: 'enabled',
        forcedDown: false,
        updatedAt: new Date().toISOString(),
        ageSeconds: 60,
        disabledReason: null,
        zone: 'nova',
      },
    });
    const watching = lifeguard(['sim', 'kill-host', 'compute3', '--watch', '30', '--json'], env);
    await waitFor('compute3 killed', () => !host('compute3').computeRunning);
    await new Promise((resolve) => setTimeout(resolve, 600));
    // The previous incident ends after this kill: not this kill's story.
    await journal.record(
      createEvent(
        'host.reenabled',
        { host: 'compute3', serviceId: 'service-3', incidentId: previous.id },
        source,
      ),
    );
    await incidents.close(previous.id, 'reenabled');
    const incidentId = 'compute3.20261130T091502Z.beef';
    await journal.record(
      createEvent(
        'host.evacuation.failed',
        { host: 'compute3', incidentId, reason: 'no valid host', failedInstances: ['a'] },
        source,
      ),
    );
    const run = await watching;
    assert.equal(run.code, 1, run.stderr);
    assert.ok(
      run.stderr.includes(
        `compute3 has an open incident (${previous.id}, open): following only a new incident`,
      ),
      run.stderr,
    );
    assert.match(run.stderr, /^✖ \+\d+\.\d{3} s {2}host\.evacuation\.failed/m);
    assert.doesNotMatch(run.stderr, /host\.reenabled/);
    assert.match(run.stderr, /^lifeguard: the recovery of compute3 failed: host\.evacuation\.failed$/m);
    const body = run.json<{ host: string; killed: boolean; events: Array<{ type: string }> }>();
    assert.equal(body.host, 'compute3');
    assert.deepEqual(
      body.events.map((event) => event.type),
      ['host.evacuation.failed'],
    );
    sim.reviveHost('compute3');
  });

  it('kill-host --watch ends at once, exit 1, when the node monitor will not act on the host (not evacuable, DISABLED, over THRESHOLD alone)', async () => {
    const journal = new EventJournal(redis, prefix);
    const source = { service: 'node-monitor', instance: 'node-monitor-1' };
    const cases: Array<[Parameters<typeof createEvent>, RegExp]> = [
      [
        [
          'admission.blocked',
          { gate: 'not-evacuable', hosts: ['compute2'], reason: 'not-in-evacuable-aggregate' },
          source,
        ],
        /^lifeguard: lifeguard will not fence or evacuate compute2: not evacuable: it is in no aggregate tagged evacuable \(TAGGED_AGGREGATES\), so lifeguard does not protect it$/m,
      ],
      [
        [
          'admission.blocked',
          { gate: 'disabled', hosts: ['compute1', 'compute2'], reason: 'DISABLED is true' },
          source,
        ],
        /^lifeguard: lifeguard will not fence or evacuate compute2: DISABLED is true in the node monitor’s configuration \(config\.yaml\)$/m,
      ],
      [
        [
          'threshold.exceeded',
          {
            scope: 'aggregate',
            aggregate: 'rack-1',
            impacted: 1,
            total: 2,
            percent: 50,
            threshold: 0,
            hosts: ['compute2'],
          },
          source,
        ],
        /^lifeguard: lifeguard will not fence or evacuate compute2: aggregate rack-1: 1 impacted > instanceha:max_failures 0, and compute2 alone is over the limit$/m,
      ],
    ];
    for (const [event, message] of cases) {
      const started = Date.now();
      const watching = lifeguard(['sim', 'kill-host', 'compute2', '--watch', '30'], env);
      await waitFor('compute2 killed', () => !host('compute2').computeRunning);
      await journal.record(createEvent(...event));
      const run = await watching;
      assert.equal(run.code, 1, run.stderr);
      assert.ok(Date.now() - started < 10_000, 'it does not wait for the time to run out');
      assert.match(run.stdout, new RegExp(`^✖ [+-]\\d+\\.\\d{3} s {2}${event[0].replace('.', '\\.')} `, 'm'));
      assert.match(run.stderr, message);
      assert.match(
        run.stderr,
        /^ {2}it stays down until you bring it back: lifeguard sim revive-host compute2$/m,
      );
      assert.doesNotMatch(run.stdout, /no end after/);
      sim.reviveHost('compute2');
      // The next watch takes events from 1 s before its kill on: this one must be older.
      await new Promise((resolve) => setTimeout(resolve, 1100));
    }
  });

  it('kill-host --watch says once that a gate holds the host back, and keeps waiting', async () => {
    const journal = new EventJournal(redis, prefix);
    const source = { service: 'node-monitor', instance: 'node-monitor-1' };
    const watching = lifeguard(['sim', 'kill-host', 'compute2', '--watch', '30'], env);
    await waitFor('compute2 killed', () => !host('compute2').computeRunning);
    for (const deferred of [2, 3, 2]) {
      await journal.record(
        createEvent(
          'admission.blocked',
          {
            gate: 'rate-limit',
            hosts: ['compute2', 'compute3'],
            reason: `MAX_HOSTS_PER_CYCLE 1: ${deferred} host(s) deferred`,
          },
          source,
        ),
      );
    }
    for (let cycle = 0; cycle < 2; cycle++) {
      await journal.record(
        createEvent(
          'threshold.exceeded',
          {
            scope: 'global',
            aggregate: null,
            impacted: 3,
            total: 5,
            percent: 60,
            threshold: 50,
            hosts: ['compute2', 'compute3'],
          },
          source,
        ),
      );
    }
    const incidentId = 'compute2.20261130T101502Z.cafe';
    await journal.record(
      createEvent(
        'host.evacuated',
        {
          host: 'compute2',
          incidentId,
          mode: 'smart',
          evacuatedInstances: [],
          durationSeconds: 1,
          poweredOn: false,
        },
        source,
      ),
    );
    const run = await watching;
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    assert.equal(lines.filter((line) => / {2}admission\.blocked {2}/.test(line)).length, 1, run.stdout);
    assert.match(run.stdout, /^⚠ \+\d+\.\d{3} s {2}admission\.blocked {2}gate=rate-limit/m);
    assert.equal(
      lines.filter((line) => line.startsWith('ℹ compute2 is held back: deferred by MAX_HOSTS_PER_CYCLE'))
        .length,
      1,
      run.stdout,
    );
    assert.match(run.stdout, /still waiting \(repeats of this are not shown\)$/m);
    assert.equal(lines.filter((line) => / {2}threshold\.exceeded {2}/.test(line)).length, 1, run.stdout);
    assert.match(
      run.stdout,
      /^ℹ compute2 is held back: THRESHOLD: 3 of 5 hosts impacted = 60\.0% > 50%: lifeguard waits until fewer hosts are down; still waiting/m,
    );
    assert.match(run.stdout, /^✔ \+\d+\.\d{3} s {2}host\.evacuated/m);
    sim.reviveHost('compute2');
  });

  it('revive-host --watch of a host lifeguard never disabled says there is nothing to re-enable and ends once it is up', async () => {
    sim.killHost('compute5');
    const run = await lifeguard(['sim', 'revive-host', 'compute5', '--watch', '30'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^nothing to re-enable on compute5: lifeguard never disabled it \(it is enabled and not forced down\), so there is nothing to re-enable$/m,
    );
    assert.match(run.stdout, /^✔ compute5 reports up$/m);
    assert.doesNotMatch(run.stdout, /waiting for lifeguard to re-enable/);
    // Disabled by an operator: lifeguard leaves it alone too.
    const operated = sim.model.hosts.get('compute5')!;
    sim.killHost('compute5');
    operated.disabled = true;
    operated.disabledReason = 'maintenance: new disks';
    const json = await lifeguard(['sim', 'revive-host', 'compute5', '--watch', '30', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(json.json(), {
      host: 'compute5',
      started: true,
      reenable: false,
      reason:
        'it was disabled by someone else (disabled_reason "maintenance: new disks"): lifeguard re-enables only the hosts it disabled',
      events: [],
    });
    operated.disabled = false;
    operated.disabledReason = null;
  });

  it('revive-host --watch of a host lifeguard evacuated waits for the re-enable', async () => {
    const journal = new EventJournal(redis, prefix);
    const evacuated = sim.model.hosts.get('compute5')!;
    sim.killHost('compute5');
    evacuated.disabled = true;
    evacuated.disabledReason =
      'lifeguard evacuation complete: 2026-11-30T10:15:02.000Z incident=compute5.20261130T101502Z.d00d';
    const watching = lifeguard(['sim', 'revive-host', 'compute5', '--watch', '30'], env);
    await waitFor('compute5 revived', () => host('compute5').computeRunning);
    await journal.record(
      createEvent(
        'host.reenabled',
        { host: 'compute5', serviceId: 'service-5', incidentId: 'compute5.20261130T101502Z.d00d' },
        { service: 'evacuation-worker', instance: 'evacuation-worker-1' },
      ),
    );
    const run = await watching;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^- waiting for lifeguard to re-enable compute5$/m);
    assert.match(run.stdout, /^✔ \+\d+\.\d{3} s {2}host\.reenabled/m);
    assert.doesNotMatch(run.stdout, /nothing to re-enable/);
    evacuated.disabled = false;
    evacuated.disabledReason = null;
    // The next watch of compute5 takes events from 1 s before its kill on: this one must be older.
    await new Promise((resolve) => setTimeout(resolve, 1100));
  });

  it('kill-host --watch ends, exit 0, when the host is revived before lifeguard acted on it', async () => {
    const watching = lifeguard(['sim', 'kill-host', 'compute4', '--watch', '120'], env);
    await waitFor('compute4 killed', () => host('compute4').computeRunning === false);
    sim.reviveHost('compute4');
    const run = await watching;
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /nova-compute on compute4 runs again and lifeguard had not acted on it: nothing to recover/,
    );
    assert.doesNotMatch(run.stdout + run.stderr, /no end after|stopped watching/);
  });

  it('kill-host --watch gives up with exit 1 when nothing happens in time', async () => {
    const run = await lifeguard(['sim', 'kill-host', 'compute5', '--watch', '1'], env);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /✖ no end after 1 s/);
    assert.match(run.stderr, /^lifeguard: stopped watching compute5 after 1 s$/m);
    sim.reviveHost('compute5');
  });
});
