import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import {
  formatDisabledReason,
  heartbeatTimesKey,
  type Incident,
  IncidentStore,
  LatestHostTimes,
} from '@lifeguard/instance-ha';
import { createOpenStackClients } from '@lifeguard/openstack';
import type { HostView } from '@lifeguard/operator-views';
import {
  deleteKeysWithPrefix,
  hostDownEvidence,
  randomKeyPrefix,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { cloudSimEnvironment, lifeguard } from './support/cli-harness.ts';

describe('lifeguard hosts', () => {
  let sim: CloudSim;
  let env: NodeJS.ProcessEnv;
  let incident: Incident;
  const prefix = randomKeyPrefix('cli-hosts');
  const redis = testRedis();
  /** compute1's host agent was last heard 3 s before the set-up ended; no other host runs one. */
  let heartbeatAt: Date;

  before(async () => {
    sim = await startCloudSim({
      hosts: 4,
      servers: 4,
      redfishPort: false,
      model: { reportIntervalSeconds: 0.2, serviceDownTimeSeconds: 1 },
    });
    env = { ...cloudSimEnvironment(sim), LIFEGUARD_REDIS_KEY_PREFIX: prefix };
    const nova = createOpenStackClients({ config: undefined, env }).compute;
    const services = await nova.listServices({ binary: 'nova-compute' });
    const id = (host: string) => services.find((service) => service.host === host)!.id;
    // compute2: failed, fenced and marked by lifeguard; compute3: a reserved spare;
    // compute4: disabled by an operator for maintenance.
    sim.killHost('compute2');
    await waitFor('compute2 down', async () => {
      const [service] = await nova.listServices({ binary: 'nova-compute', host: 'compute2' });
      return service?.state === 'down';
    });
    incident = (
      await new IncidentStore(redis, prefix).openIncident({
        host: 'compute2',
        serviceId: id('compute2'),
        fencingToken: 1,
        kdumpFenced: false,
        evidence: hostDownEvidence(id('compute2'), { zone: 'nova' }),
      })
    ).incident;
    await nova.updateService(id('compute2'), { forced_down: true });
    await nova.updateService(id('compute2'), {
      status: 'disabled',
      disabled_reason: formatDisabledReason({ kind: 'evacuating', incidentId: incident.id, kdump: true }),
    });
    await nova.updateService(id('compute3'), {
      status: 'disabled',
      disabled_reason: 'lifeguard-reserved: 2026-11-30T08:00:00Z',
    });
    await nova.updateService(id('compute4'), {
      status: 'disabled',
      disabled_reason: 'disk replacement, ticket 4711',
    });
    heartbeatAt = new Date(Date.now() - 3_000);
    await new LatestHostTimes(redis, heartbeatTimesKey(prefix)).record('compute1', heartbeatAt);
  });

  after(async () => {
    await sim.close();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it("shows each compute service's status, state, forced_down, its agent's last heartbeat, marker and open incident", async () => {
    const run = await lifeguard(['hosts'], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    assert.match(
      lines[0]!,
      /^HOST\s+ZONE\s+STATUS\s+STATE\s+FORCED_DOWN\s+LAST REPORT\s+HEARTBEAT\s+MARKER\s+DISABLED_REASON\s+INCIDENT$/,
    );
    assert.match(lines[1]!, /^compute1\s+nova\s+enabled\s+up\s+false\s+.+ ago\s+.+ ago\s+-\s+-\s+-$/);
    assert.match(
      lines[2]!,
      new RegExp(
        `^compute2\\s+nova\\s+disabled\\s+down\\s+true\\s+.+ ago\\s+-\\s+evacuating \\(lifeguard, kdump\\)\\s+lifeguard evacuation \\(kdump\\): .+…\\s+${incident.id.replace(/\./g, '\\.')} \\(open\\)$`,
      ),
    );
    assert.match(
      lines[3]!,
      /^compute3\s+nova\s+disabled\s+up\s+false\s+.+\s+reserved \(lifeguard\)\s+lifeguard-reserved: 2026-11-30T08:00:00Z\s+-$/,
    );
    assert.match(
      lines[4]!,
      /^compute4\s+nova\s+disabled\s+up\s+false\s+.+\s+other reason\s+disk replacement, ticket 4711\s+-$/,
    );
    assert.equal(lines.length, 5);
  });

  it('gives the parsed marker and the incident with --json', async () => {
    const run = await lifeguard(['hosts', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const hosts = run.json<HostView[]>();
    const failed = hosts.find((host) => host.host === 'compute2')!;
    assert.equal(failed.forcedDown, true);
    assert.equal(failed.status, 'disabled');
    assert.deepEqual(
      {
        kind: failed.marker.kind,
        origin: failed.marker.origin,
        kdump: failed.marker.kdump,
        incidentId: failed.marker.incidentId,
      },
      { kind: 'evacuating', origin: 'lifeguard', kdump: true, incidentId: incident.id },
    );
    assert.equal(failed.incident?.id, incident.id);
    assert.equal(failed.lastHeartbeat, null, 'no host agent heard on compute2');
    assert.equal(hosts.find((host) => host.host === 'compute1')?.lastHeartbeat, heartbeatAt.toISOString());
    assert.deepEqual(
      hosts.map((host) => host.host),
      ['compute1', 'compute2', 'compute3', 'compute4'],
    );
  });

  it('while Nova hangs it stops after LIFEGUARD_CLI_OPENSTACK_TIMEOUT_SECONDS and one retry, naming Nova, instead of hanging', async () => {
    // Longer than both attempts; short enough that the requests left behind end before the file does.
    sim.setApiDelay(5_000, '/compute/v2.1/os-services');
    try {
      const run = await lifeguard(['hosts'], { ...env, LIFEGUARD_CLI_OPENSTACK_TIMEOUT_SECONDS: '0.5' });
      assert.equal(run.code, 1, run.stdout);
      assert.equal(run.stdout, '');
      assert.match(
        run.stderr,
        /^lifeguard: Nova is not reachable at \S+os-services\S* \(GET \/os-services\): The operation was aborted due to timeout; gave up after 2 attempts/m,
      );
    } finally {
      sim.setApiDelay(0);
    }
  });

  it('refuses a timeout that is not a number of seconds, naming the variable in words', async () => {
    const run = await lifeguard(['hosts'], { ...env, LIFEGUARD_CLI_OPENSTACK_TIMEOUT_SECONDS: 'abc' });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /LIFEGUARD_CLI_OPENSTACK_TIMEOUT_SECONDS.*a number of seconds, e\.g\. 10/);
    assert.doesNotMatch(run.stderr, /NaN/);
  });

  it('with a clouds.yaml that is not there it names the file and OS_CLIENT_CONFIG_FILE and exits 1', async () => {
    const run = await lifeguard(['hosts'], {
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      OS_CLIENT_CONFIG_FILE: '/nonexistent/clouds.yaml',
      OS_CLOUD: 'nowhere',
    });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(
      run.stderr,
      /^lifeguard: invalid configuration: OS_CLIENT_CONFIG_FILE \(\/nonexistent\/clouds\.yaml\): cannot read file: ENOENT \(no such file\)$/m,
    );
  });
});
