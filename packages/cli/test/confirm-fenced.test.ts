import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { createEvent, evacuateHostJobId, fencingJobId, JOB_QUEUES } from '@lifeguard/contracts';
import { type Incident, IncidentStore } from '@lifeguard/instance-ha';
import { createOpenStackClients } from '@lifeguard/openstack';
import type { SystemStatus } from '@lifeguard/operator-views';
import {
  AmqpClient,
  bullmqPrefix,
  createLogger,
  declareEventsTopology,
  EventJournal,
  EventPublisher,
  leaseTokenKey,
  nodeMonitorLeaderKey,
} from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  hostDownEvidence,
  issueFencingToken,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { lifeguard, startWorkerProcess, type WorkerProcess } from './support/cli-harness.ts';

describe('lifeguard host confirm-fenced', () => {
  let sim: CloudSim;
  let vhost: TestVhost;
  let amqp: AmqpClient;
  let worker: WorkerProcess;
  let env: NodeJS.ProcessEnv;
  const prefix = randomKeyPrefix('cli-confirm');
  const redis = testRedis();
  const store = new IncidentStore(redis, prefix);

  /** What the node monitor does for a failed host: open the incident, publish host.down. */
  async function hostDown(host: string): Promise<Incident> {
    const nova = createOpenStackClients({ env, searchDirectories: [] }).compute;
    const [service] = await nova.listServices({ binary: 'nova-compute', host });
    const evidence = hostDownEvidence(service!.id, { zone: 'nova' });
    const { incident } = await store.openIncident({
      host,
      serviceId: service!.id,
      fencingToken: 1,
      kdumpFenced: false,
      evidence,
    });
    const journal = new EventJournal(redis, prefix);
    const events = new EventPublisher(
      amqp,
      { service: 'node-monitor', instance: 'test' },
      createLogger({ service: 't', level: 'silent' }),
      journal,
    );
    await issueFencingToken(redis, leaseTokenKey(nodeMonitorLeaderKey(prefix)), 1);
    await events.publishEvent(
      createEvent(
        'host.down',
        { host, incidentId: incident.id, fencingToken: 1, evidence, kdumpFenced: false, resume: false },
        { service: 'node-monitor', instance: 'test' },
      ),
    );
    return incident;
  }

  before(async () => {
    sim = await startCloudSim({
      hosts: 3,
      servers: 3,
      redfishPort: false,
      model: { reportIntervalSeconds: 0.2, serviceDownTimeSeconds: 1 },
    });
    vhost = await createTestVhost('cli-confirm');
    amqp = await AmqpClient.connect({
      url: vhost.url,
      connectionName: 'cli-confirm-test',
      service: 'test',
      logger: createLogger({ service: 't', level: 'silent' }),
    });
    await amqp.declare(declareEventsTopology);
    const entry = sim.cloudEntry('admin_token');
    env = {
      LIFEGUARD_AMQP_URL: vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: prefix,
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: String(entry.auth.token),
      OS_ENDPOINT: String(entry.auth.endpoint),
    };
    const directory = mkdtempSync(join(tmpdir(), 'cli-confirm-'));
    // compute2's only BMC does not answer: its fencing can never confirm the power off.
    writeFileSync(
      join(directory, 'fencing.yaml'),
      'FencingConfig:\n  compute2:\n    agent: redfish\n    ipaddr: 127.0.0.1\n    ipport: 9\n    login: admin\n    passwd: "never-logged"\n    tls: "true"\n    ssl_verify: false\n    timeout: 2\n',
    );
    writeFileSync(join(directory, 'config.yaml'), 'config:\n  FENCING_TIMEOUT: "5"\n');
    worker = startWorkerProcess('fencing-worker', 'fencer-under-test', {
      ...env,
      FENCING_CONFIG_PATH: join(directory, 'fencing.yaml'),
      INSTANCEHA_CONFIG_PATH: join(directory, 'config.yaml'),
      LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
      LIFEGUARD_FENCING_ATTEMPTS: '1',
      LIFEGUARD_FENCING_RECONCILE_SECONDS: '0.5',
      LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS: '0',
    });
    // The fencing worker is up once `lifeguard status` lists it ready.
    await waitFor(
      'the fencing worker to be ready',
      async () => {
        const run = await lifeguard(['status', '--json'], env);
        return run.code === 0 && run.json<SystemStatus>().workers.some((each) => each.readiness === 'ready');
      },
      60_000,
      250,
    );
  });

  after(async () => {
    await worker.stop();
    await amqp.close();
    await sim.close();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('refuses clearly for a host without an open incident (exit 1, nothing recorded)', async () => {
    const run = await lifeguard(['host', 'confirm-fenced', 'compute1', '--yes'], env);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(
      run.stderr,
      /^lifeguard: compute1 has no open incident: there is nothing to confirm, nothing was recorded$/m,
    );
    assert.deepEqual(await store.listOpen(), []);
  });

  it('names a host Nova does not have as such, not as one without an incident (exit 1, nothing recorded)', async () => {
    const run = await lifeguard(['host', 'confirm-fenced', 'compute-typo', '--yes'], env);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^lifeguard: Nova has no compute host compute-typo: there is nothing to confirm, nothing was recorded$/m,
    );
    assert.match(run.stderr, /see `lifeguard hosts`/);
    assert.deepEqual(await store.listOpen(), []);
  });

  /** Nova's view of a host's nova-compute service. */
  async function service(host: string) {
    const nova = createOpenStackClients({ env, searchDirectories: [] }).compute;
    const [found] = await nova.listServices({ binary: 'nova-compute', host });
    return found!;
  }

  it('an operator confirmation lets the fencing worker go on when no BMC answers', async () => {
    const host = 'compute2';
    sim.killHost(host);
    // The fence job re-checks that Nova shows the host down, as the node monitor saw it.
    await waitFor('compute2 down in Nova', async () => (await service(host)).state === 'down', 10_000);
    const incident = await hostDown(host);
    const fencing = new Queue(JOB_QUEUES.fencing, { connection: redis, prefix: bullmqPrefix(prefix) });
    const evacuation = new Queue(JOB_QUEUES.evacuation, { connection: redis, prefix: bullmqPrefix(prefix) });
    try {
      const jobId = fencingJobId(host, incident.id);
      await waitFor(
        'the fence job to fail',
        async () => (await (await fencing.getJob(jobId))?.getState()) === 'failed',
        60_000,
      );
      assert.equal((await store.get(incident.id))?.fence, null, 'not fenced: the BMC never answered');
      assert.equal(await evacuation.getJob(evacuateHostJobId(host, incident.id)), undefined);

      // Once every attempt failed and the host is silent, incident and hosts name the way forward and
      // what to check first.
      for (const args of [['incident', incident.id], ['hosts']]) {
        const shown = await lifeguard(args, env);
        assert.equal(shown.code, 0, shown.stderr);
        assert.match(
          shown.stdout,
          /Fencing compute2 has not succeeded \(incident .+, failed, all \d+ attempts failed\)/,
        );
        assert.match(shown.stdout, /First check that compute2 is really powered off .* or cut off from/);
        assert.match(shown.stdout, /^ {2}lifeguard host confirm-fenced compute2 --operator <your name>$/m);
      }

      // Without --yes (and no terminal to ask on) nothing is recorded: exit 2.
      const unconfirmed = await lifeguard(['host', 'confirm-fenced', host, '--operator', 'alice'], env);
      assert.equal(unconfirmed.code, 2);
      assert.match(
        unconfirmed.stderr,
        /WARNING: you are declaring that compute host compute2 is POWERED OFF\./,
      );
      assert.match(unconfirmed.stderr, /not confirmed; nothing was changed \(add --yes to confirm\)/);
      assert.equal((await store.get(incident.id))?.fence, null);

      const run = await lifeguard(
        ['host', 'confirm-fenced', host, '--operator', 'alice', '--note', 'rack 12 PDU off', '--yes'],
        env,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /data corruption/);
      assert.match(
        run.stdout,
        new RegExp(
          `^recorded on incident ${incident.id.replace(/\./g, '\\.')}: proof operator-confirmed by alice at .+ \\(note: rack 12 PDU off\\)$`,
          'm',
        ),
      );
      const fence = (await store.get(incident.id))?.fence;
      assert.equal(fence?.proof, 'operator-confirmed');
      assert.equal(fence?.method, 'operator');
      assert.equal(fence?.by, 'alice');
      assert.equal(fence?.note, 'rack 12 PDU off');

      // The fencing worker takes the confirmation as the proof: Nova marked, host handed to evacuation.
      await waitFor(
        'the fence job to complete',
        async () => (await (await fencing.getJob(jobId))?.getState()) === 'completed',
        60_000,
      );
      const result = (await fencing.getJob(jobId))!.returnvalue as { proof: string; method: string };
      assert.equal(result.proof, 'operator-confirmed');
      assert.equal(result.method, 'operator');
      assert.ok(await evacuation.getJob(evacuateHostJobId(host, incident.id)), 'handed to evacuation');
      const state = sim.hostStates().find((each) => each.host === host);
      assert.equal(state?.forcedDown, true);
      assert.equal(state?.status, 'disabled');

      // A second confirmation records nothing: the first proof wins.
      const again = await lifeguard(['host', 'confirm-fenced', host, '--operator', 'bob', '--yes'], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(
        again.stdout,
        /is already fenced in incident .+: operator-confirmed by alice at .+; nothing recorded/,
      );
      assert.equal((await store.get(incident.id))?.fence?.by, 'alice');
      const json = await lifeguard(['host', 'confirm-fenced', host, '--yes', '--json'], env);
      assert.equal(json.code, 0, json.stderr);
      const body = json.json<{ recorded: boolean; incident: Incident }>();
      assert.equal(body.recorded, false);
      assert.equal(body.incident.fence?.by, 'alice');
      assert.ok(!worker.output.join('').includes('never-logged'), 'the BMC password was logged');
    } finally {
      await fencing.close();
      await evacuation.close();
    }
  });

  it('refused while the host reports (exit 1, the evidence named, nothing recorded); the override is recorded in the fence record and in host.fenced', async () => {
    const host = 'compute3';
    sim.killHost(host);
    await waitFor('compute3 down in Nova', async () => (await service(host)).state === 'down', 10_000);
    const opened = await hostDown(host);
    const incident = { incident: opened };
    // fencing.yaml has no entry for compute3: its fence job fails for good.
    const fencing = new Queue(JOB_QUEUES.fencing, { connection: redis, prefix: bullmqPrefix(prefix) });
    await waitFor(
      'the fence job to fail',
      async () => (await (await fencing.getJob(fencingJobId(host, opened.id)))?.getState()) === 'failed',
      30_000,
    );
    await fencing.close();
    // nova-compute comes back: Nova shows it up and reporting.
    sim.reviveHost(host);
    await waitFor('compute3 up in Nova', async () => (await service(host)).state === 'up', 10_000);
    const refused = await lifeguard(['host', 'confirm-fenced', host, '--operator', 'tester', '--yes'], env);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^lifeguard: compute3 is reporting: refusing to record it as powered off; nothing was recorded$/m,
    );
    assert.match(
      refused.stderr,
      /Nova: state up, updated_at \d+ s ago \(DELTA 30 s\): nova-compute is reporting/,
    );
    assert.match(refused.stderr, /--host-is-reporting-override/);
    assert.equal((await store.get(incident.incident.id))?.fence, null, 'nothing recorded');

    const overridden = await lifeguard(
      ['host', 'confirm-fenced', host, '--operator', 'tester', '--yes', '--host-is-reporting-override'],
      env,
    );
    assert.equal(overridden.code, 0, overridden.stderr);
    assert.match(overridden.stderr, /OVERRIDE: compute3 is reporting \(Nova: state up/);
    const fence = (await store.get(incident.incident.id))?.fence;
    assert.equal(fence?.proof, 'operator-confirmed');
    assert.match(fence?.reportingOverride ?? '', /^Nova: state up, updated_at \d+ s ago \(DELTA 30 s\)/);
    // The fencing worker goes on from the confirmation; host.fenced carries the override.
    const journal = new EventJournal(redis, prefix);
    const fenced = await waitFor('host.fenced', async () =>
      (await journal.recent(1000)).find(
        (event) => event.type === 'host.fenced' && event.data.incidentId === opened.id,
      ),
    );
    assert.equal(fenced.type, 'host.fenced');
    if (fenced.type === 'host.fenced') assert.equal(fenced.data.reportingOverride, fence?.reportingOverride);
    await store.close(opened.id, 'test done');
  });
});
