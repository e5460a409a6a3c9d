import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { ReenableWaits } from '@lifeguard/instance-ha';
import type { HostView, ReenableWaitView } from '@lifeguard/operator-views';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
} from '@lifeguard/testing';
import { cloudSimEnvironment, lifeguard } from './support/cli-harness.ts';

const REFUSAL =
  'Unable to force up host compute2 as `done` evacuation migration records remain associated with the host. Ensure the compute service has been restarted successfully or remove all such records.';

describe('lifeguard hosts and status: hosts whose re-enable waits for Nova', () => {
  let sim: CloudSim;
  let vhost: TestVhost;
  let env: NodeJS.ProcessEnv;
  const prefix = randomKeyPrefix('cli-reenable-waits');
  const redis = testRedis();

  before(async () => {
    sim = await startCloudSim({ hosts: 3, redfishPort: false });
    vhost = await createTestVhost('cli-reenable-waits');
    env = { ...cloudSimEnvironment(sim), LIFEGUARD_REDIS_KEY_PREFIX: prefix, LIFEGUARD_AMQP_URL: vhost.url };
    // What the evacuation worker's re-enable jobs recorded: compute2 refused for 7 minutes and
    // announced (past LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS), compute3 refused for 20 s.
    const waits = new ReenableWaits(redis, prefix);
    const now = Date.now();
    const compute2 = await waits.refused(
      { host: 'compute2', serviceId: 'svc-2', incidentId: 'compute2.20261201T100000Z.ab12', reason: REFUSAL },
      new Date(now - 420_000),
    );
    await waits.announced(compute2, new Date(now - 120_000));
    await waits.refused(
      { host: 'compute3', serviceId: 'svc-3', incidentId: null, reason: REFUSAL },
      new Date(now - 20_000),
    );
  });

  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await sim.close();
    await vhost.delete();
  });

  it('`lifeguard hosts` lists them under the table, the announced one as waiting for its nova-compute to restart', async () => {
    const run = await lifeguard(['hosts'], env);
    assert.equal(run.code, 0, run.stderr);
    const section = run.stdout.slice(run.stdout.indexOf('Re-enable waiting for Nova (2)'));
    assert.ok(section.startsWith('Re-enable waiting for Nova (2)'), run.stdout);
    const line = (host: string) => section.split('\n').find((each) => each.startsWith(`${host} `)) ?? '';
    assert.match(line('compute2'), /compute2\.20261201T100000Z\.ab12/);
    assert.match(
      line('compute2'),
      /waiting for its nova-compute to restart \(Nova refuses forced_down=false for 7 min 0\d s\)/,
    );
    assert.match(line('compute2'), /Unable to force up host compute2/);
    assert.match(line('compute3'), /re-enable retrying \(Nova refuses forced_down=false for 2\d\.\d s\)/);
    assert.match(
      section,
      /⚠ compute2: start nova-compute on the host; it marks its evacuations completed and lifeguard then re-enables it/,
    );
  });

  it('`lifeguard hosts --json` gives each host its reenableWait (null when none)', async () => {
    const run = await lifeguard(['hosts', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const hosts = run.json<Array<HostView & { reenableWait: ReenableWaitView | null }>>();
    const byHost = new Map(hosts.map((host) => [host.host, host.reenableWait]));
    assert.equal(byHost.get('compute1'), null);
    assert.equal(byHost.get('compute2')?.overdue, true);
    assert.ok((byHost.get('compute2')?.waitingSeconds ?? 0) >= 420);
    assert.equal(byHost.get('compute2')?.reason, REFUSAL);
    assert.equal(byHost.get('compute3')?.overdue, false);
  });

  it('`lifeguard status` shows the same section, and `--json` the waits', async () => {
    const run = await lifeguard(['status'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Re-enable waiting for Nova \(2\)/);
    assert.match(run.stdout, /compute2.*waiting for its nova-compute to restart/);
    const json = await lifeguard(['status', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const waits = json.json<{ reenableWaits: ReenableWaitView[] }>().reenableWaits;
    assert.deepEqual(
      waits.map((wait) => [wait.host, wait.overdue]),
      [
        ['compute2', true],
        ['compute3', false],
      ],
    );
  });

  it('shows no such section when no host waits', async () => {
    const empty = { ...env, LIFEGUARD_REDIS_KEY_PREFIX: randomKeyPrefix('cli-no-waits') };
    const run = await lifeguard(['hosts'], empty);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /Re-enable waiting/);
  });
});
