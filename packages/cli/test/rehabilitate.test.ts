import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { formatDisabledReason, type Incident, IncidentStore } from '@lifeguard/instance-ha';
import { type ComputeService, createOpenStackClients, type NovaClient } from '@lifeguard/openstack';
import { AmqpClient, createLogger, declareEventsTopology, EventJournal } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  hostDownEvidence,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { lifeguard } from './support/cli-harness.ts';

describe('lifeguard host rehabilitate (cloud-sim)', () => {
  let sim: CloudSim;
  let vhost: TestVhost;
  let nova: NovaClient;
  let env: NodeJS.ProcessEnv;
  let incident: Incident;
  const host = 'compute2';
  const prefix = randomKeyPrefix('cli-rehab');
  const redis = testRedis();
  const store = new IncidentStore(redis, prefix);

  const service = async (name: string): Promise<ComputeService> =>
    (await nova.listServices({ binary: 'nova-compute', host: name }))[0]!;

  before(async () => {
    sim = await startCloudSim({
      hosts: 3,
      servers: 0,
      redfishPort: false,
      model: {
        reportIntervalSeconds: 0.2,
        serviceDownTimeSeconds: 1,
        evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 100 },
      },
    });
    const servers = [sim.addServer({ host, name: 'web-1' }).id, sim.addServer({ host, name: 'web-2' }).id];
    vhost = await createTestVhost('cli-rehab');
    // The events exchange exists once any lifeguard process started.
    const amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'cli-rehab-setup',
      service: 'test',
      logger: createLogger({ service: 't', level: 'silent' }),
    });
    await amqp.declare(declareEventsTopology);
    await amqp.close();
    const entry = sim.cloudEntry('admin_token');
    env = {
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      LIFEGUARD_CLOUD_SIM_URL: sim.urls.api,
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: String(entry.auth.token),
      OS_ENDPOINT: String(entry.auth.endpoint),
    };
    nova = createOpenStackClients({ env, searchDirectories: [] }).compute;

    // What lifeguard leaves behind for a failed host: fenced, forced down, disabled with the
    // complete marker, its servers evacuated (migrations `done`), the incident `evacuated`.
    sim.killHost(host);
    await waitFor('compute2 reported down', async () => (await service(host)).state === 'down');
    const failed = await service(host);
    incident = (
      await store.openIncident({
        host,
        serviceId: failed.id,
        fencingToken: 1,
        kdumpFenced: false,
        evidence: hostDownEvidence(failed.id, { zone: 'nova' }),
      })
    ).incident;
    await store.recordFence(incident.id, {
      proof: 'power-off-confirmed',
      method: 'redfish',
      at: new Date().toISOString(),
      by: null,
      note: null,
    });
    await store.setState(incident.id, 'evacuating');
    await nova.updateService(failed.id, { forced_down: true });
    await nova.updateService(failed.id, {
      status: 'disabled',
      disabled_reason: formatDisabledReason({ kind: 'complete', incidentId: incident.id }),
    });
    for (const id of servers) await nova.evacuate(id);
    await waitFor('both evacuations done', async () => {
      const migrations = await nova.listMigrations({ sourceCompute: host, migrationType: 'evacuation' });
      return migrations.length === 2 && migrations.every((migration) => migration.status === 'done');
    });
  });

  after(async () => {
    await sim.close();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('refuses while lifeguard is still evacuating the host', async () => {
    const run = await lifeguard(['host', 'rehabilitate', host, '--yes'], env);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /✖ compute2 cannot be rehabilitated now; nothing was changed/);
    assert.match(
      run.stderr,
      new RegExp(
        `lifeguard is still handling compute2: incident ${incident.id.replace(/\./g, '\\.')} is evacuating \\(fenced\\)`,
      ),
    );
    assert.equal((await service(host)).forced_down, true);
  });

  it('refuses while evacuations from the host are "done": its nova-compute has not restarted yet', async () => {
    await store.setState(incident.id, 'evacuated');
    const run = await lifeguard(['host', 'rehabilitate', host, '--yes'], env);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /2 evacuation\(s\) from compute2 are "done" but not "completed": nova-compute on compute2 has not started since they finished/,
    );
    assert.match(run.stderr, /start nova-compute on compute2 .* Nova refuses to lift forced_down until then/);
    const unchanged = await service(host);
    assert.equal(unchanged.forced_down, true);
    assert.equal(unchanged.status, 'disabled');
    assert.equal((await store.get(incident.id))?.state, 'evacuated');
  });

  it('after the compute restarts, --dry-run prints the plan and changes nothing', async () => {
    const revived = await lifeguard(['sim', 'revive-host', host], env);
    assert.equal(revived.code, 0, revived.stderr);
    await waitFor('evacuations completed', async () =>
      (await nova.listMigrations({ sourceCompute: host, migrationType: 'evacuation' })).every(
        (migration) => migration.status === 'completed',
      ),
    );
    const run = await lifeguard(['host', 'rehabilitate', host, '--dry-run'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /✔ compute2 can be put back into service/);
    assert.match(run.stdout, /^Plan for compute2:$/m);
    assert.match(run.stdout, /^ {2}1\. lift forced_down: PUT \/os-services\/<id> \{"forced_down": false\}$/m);
    assert.match(run.stdout, /^ {2}2\. wait until nova-compute on compute2 reports up$/m);
    assert.match(
      run.stdout,
      /^ {2}3\. enable the compute service: PUT \/os-services\/<id> \{"status": "enabled"\}$/m,
    );
    assert.match(
      run.stdout,
      new RegExp(`^ {2}4\\. close incident ${incident.id.replace(/\./g, '\\.')} `, 'm'),
    );
    assert.match(run.stdout, /^ {2}5\. publish host\.reenabled$/m);
    assert.match(run.stdout, /^dry run: nothing was changed$/m);
    const json = await lifeguard(['host', 'rehabilitate', host, '--dry-run', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stderr, /✔ compute2 can be put back into service/, 'progress goes to standard error');
    const body = json.json<{ host: string; verdict: { kind: string; steps: string[] }; done: string[] }>();
    assert.deepEqual(body.verdict.steps, [
      'unset-forced-down',
      'wait-until-up',
      'enable',
      'close-incident',
      'publish-reenabled',
    ]);
    assert.deepEqual(body.done, []);
    assert.equal((await service(host)).forced_down, true);
  });

  it('without --yes and no terminal it asks for confirmation (exit 2) and changes nothing', async () => {
    const run = await lifeguard(['host', 'rehabilitate', host], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /put compute2 back into service: not confirmed; nothing was changed/);
    assert.equal((await service(host)).forced_down, true);
  });

  it('with --yes it lifts forced_down, waits until up, enables, closes the incident under --operator and publishes host.reenabled', async () => {
    // The command as the fencing advice for a host that reports again writes it (fencingAdviceOf).
    const run = await lifeguard(['host', 'rehabilitate', host, '--operator', 'alice', '--yes'], env);
    assert.equal(run.code, 0, run.stderr);
    for (const line of [
      /^✔ forced_down of compute2 lifted$/m,
      /^✔ nova-compute on compute2 reports up$/m,
      /^✔ compute2 enabled$/m,
      new RegExp(`^✔ incident ${incident.id.replace(/\./g, '\\.')} closed$`, 'm'),
      /^✔ host\.reenabled published$/m,
      /^compute2 is back in service$/m,
    ]) {
      assert.match(run.stdout, line);
    }
    const now = await service(host);
    assert.equal(now.forced_down, false);
    assert.equal(now.status, 'enabled');
    assert.equal(now.state, 'up');
    const closed = await store.get(incident.id);
    assert.equal(closed?.state, 'closed');
    assert.equal(closed?.outcome, 'rehabilitated by alice');
    const timeline = await new EventJournal(redis, prefix).incident(incident.id);
    const reenabled = timeline.find((event) => event.type === 'host.reenabled');
    assert.ok(reenabled, 'host.reenabled is in the incident timeline');
    assert.equal(reenabled.source.service, 'lifeguard-cli');

    const again = await lifeguard(['host', 'rehabilitate', host, '--yes'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /compute2 is enabled, not forced down, and has no open incident/);
  });

  it("refuses a host disabled for an operator's own reason, and an unknown host", async () => {
    const maintenance = await service('compute3');
    await nova.updateService(maintenance.id, { status: 'disabled', disabled_reason: 'firmware upgrade' });
    const run = await lifeguard(['host', 'rehabilitate', 'compute3', '--yes'], env);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /compute3 is disabled \("firmware upgrade"\), not by an evacuation: not lifeguard's to undo/,
    );
    assert.match(run.stderr, /openstack compute service set --enable compute3 nova-compute/);
    assert.equal((await service('compute3')).status, 'disabled');
    const unknown = await lifeguard(['host', 'rehabilitate', 'compute42', '--dry-run'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^lifeguard: no compute host compute42$/m);
    const json = await lifeguard(['host', 'rehabilitate', 'compute42', '--json'], env);
    assert.equal(json.code, 1);
    assert.deepEqual(json.json(), {
      error: {
        message: 'no compute host compute42',
        hints: ['see `lifeguard hosts` for the hosts Nova knows'],
        exitStatus: 1,
      },
    });
  });
});
