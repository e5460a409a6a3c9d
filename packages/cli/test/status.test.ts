import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { EVENTS_EXCHANGE, JOB_QUEUES, QUEUES } from '@lifeguard/contracts';
import { AdmissionSummaryStore, IncidentStore } from '@lifeguard/instance-ha';
import type { SystemStatus } from '@lifeguard/operator-views';
import {
  bullmqPrefix,
  declareWorkQueue,
  LeaderLease,
  nodeMonitorLeaderKey,
  type ServiceContext,
  startService,
  WorkerRegistry,
} from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { lifeguard, lifeguardProcess } from './support/cli-harness.ts';

const evidence = {
  serviceId: 'service-3',
  state: 'down',
  status: 'enabled',
  forcedDown: false,
  updatedAt: '2026-11-30T08:00:00Z',
  ageSeconds: 95,
  disabledReason: null,
  zone: 'nova',
};

describe('lifeguard status', () => {
  let vhost: TestVhost;
  let worker: ServiceContext & { finishStartup(): void };
  let lease: LeaderLease;
  const prefix = randomKeyPrefix('cli-status');
  const redis = testRedis();
  let env: NodeJS.ProcessEnv;
  let incidentId: string;

  before(async () => {
    vhost = await createTestVhost('cli-status');
    env = { LIFEGUARD_AMQP_URL: vhost.url, LIFEGUARD_REDIS_KEY_PREFIX: prefix };
    // A running worker: registers itself and answers /readyz.
    worker = await startService({
      service: 'fencing-worker',
      defaultHttpPort: 0,
      env: {
        ...env,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_LOG_LEVEL: 'silent',
        LIFEGUARD_INSTANCE_NAME: 'fencer-1',
      },
    });
    (worker.shutdown as unknown as { options: { exit: (code: number) => void } }).options.exit = () => {};
    worker.finishStartup();
    // The node monitor's leader lease.
    lease = new LeaderLease(redis, {
      key: nodeMonitorLeaderKey(prefix),
      holder: 'monitor-a',
      ttlMilliseconds: 60_000,
      logger: pino({ level: 'silent' }),
    });
    await lease.tryAcquire();
    // Two fence jobs waiting, and one host.down event waiting in the fencing worker's queue.
    const fencing = new Queue(JOB_QUEUES.fencing, { connection: redis, prefix: bullmqPrefix(prefix) });
    await fencing.add('fence', { host: 'compute-3' }, { jobId: 'fence.compute-3.a' });
    await fencing.add('fence', { host: 'compute-4' }, { jobId: 'fence.compute-4.b' });
    await fencing.close();
    await worker.amqp.declare((channel) =>
      declareWorkQueue(channel, QUEUES.hostDown, [{ exchange: EVENTS_EXCHANGE, routingKey: 'host.down' }]),
    );
    await worker.amqp.publish(EVENTS_EXCHANGE, 'host.down', Buffer.from('{}'));
    const { incident } = await new IncidentStore(redis, prefix).openIncident({
      host: 'compute-3',
      serviceId: 'service-3',
      fencingToken: 4,
      kdumpFenced: false,
      evidence,
    });
    incidentId = incident.id;
    await waitFor(
      'the worker registered',
      async () => (await redis.keys(`${prefix}:workers:*`)).length === 1,
    );
  });

  after(async () => {
    await lease.stop();
    await worker.shutdown.shutdown('test');
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await vhost.delete();
  });

  it('shows the workers up, the leader, queue depths and open incidents as tables', async () => {
    const run = await lifeguard(['status'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Workers \(1 up\)$/m);
    assert.match(run.stdout, /^fencing-worker\s+fencer-1\s+\S+\s+\d+\s+127\.0\.0\.1:\d+\s+.+ago\s+ready$/m);
    assert.match(
      run.stdout,
      new RegExp(
        `^Node monitor leader: monitor-a \\(fencing token \\d+, lease ${prefix}:node-monitor:leader, .+ left\\)$`,
        'm',
      ),
    );
    assert.match(run.stdout, /^Last poll: none kept \(no node-monitor leader has polled/m);
    assert.match(run.stdout, /^fencing\s+2\s+0\s+0\s+0\s+0\s+0\s+0$/m, 'two fence jobs waiting');
    assert.match(run.stdout, /^evacuation\s+0\s+0/m);
    assert.match(
      run.stdout,
      /^lifeguard\.fencing-worker\.host-down\s+1\s+0$/m,
      'one ready message, no consumer',
    );
    assert.match(run.stdout, /^lifeguard\.provisioning-blocks\.commands\s+not declared\s+-$/m);
    assert.match(run.stdout, /^lifeguard\.dead-letter\s+0\s+0$/m);
    assert.match(run.stdout, /^Open incidents \(1\)$/m);
    assert.match(
      run.stdout,
      new RegExp(`^${incidentId.replace(/\./g, '\\.')}\\s+compute-3\\s+open\\s+`, 'm'),
    );
  });

  it('prints the same facts as JSON with --json', async () => {
    const run = await lifeguard(['status', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const status = run.json<SystemStatus>();
    assert.deepEqual(
      status.workers.map((each) => [each.service, each.instance, each.readiness, each.pid]),
      [['fencing-worker', 'fencer-1', 'ready', process.pid]],
    );
    assert.equal(status.leader?.holder, 'monitor-a');
    assert.equal(status.leaderKey, `${prefix}:node-monitor:leader`);
    assert.equal(status.leader?.token, lease.token);
    assert.deepEqual(
      status.jobQueues.map((queue) => [queue.queue, queue.counts.waiting]),
      [
        ['fencing', 2],
        ['evacuation', 0],
        ['evacuation-instance', 0],
        ['recovery', 0],
        ['instance-restart', 0],
      ],
    );
    const hostDown = status.brokerQueues?.find((queue) => queue.queue === QUEUES.hostDown);
    assert.deepEqual(hostDown, { queue: QUEUES.hostDown, declared: true, messages: 1, consumers: 0 });
    assert.deepEqual(
      status.openIncidents.map((incident) => incident.id),
      [incidentId],
    );
  });

  it("shows what the leader's last poll held back: the gate that stopped it first, then each held host and until when", async () => {
    const summaries = new AdmissionSummaryStore(redis, prefix);
    const polled = new Date(Date.now() - 2_000);
    const until = new Date(Date.now() + 40_000);
    await summaries.write(
      {
        at: polled.toISOString(),
        stoppedBy: 'all-services-stale',
        blocked: [
          {
            gate: 'host-reachable',
            hosts: ['compute-9'],
            reason: 'Nova says down but the host still sends heartbeats',
          },
          {
            gate: 'all-services-stale',
            hosts: ['compute-1', 'compute-2', 'compute-3'],
            reason:
              'all 3 active compute services look failed (1 past DELTA, 2 silent past THRESHOLD_SUSPECT_AGE)',
          },
        ],
        held: [{ host: 'compute-7', gate: 'threshold', until: until.toISOString() }],
      },
      60,
    );
    try {
      const run = await lifeguard(['status'], env);
      assert.equal(run.code, 0, run.stderr);
      const section = run.stdout.slice(run.stdout.indexOf('Last poll'));
      const lines = section.split('\n').slice(0, 4);
      assert.match(lines[0]!, /^Last poll \(.+, \d.* ago\): stopped by all-services-stale, nothing fenced$/);
      assert.match(
        lines[1]!,
        /^⚠ all-services-stale: all 3 active compute services look failed .* — compute-1, compute-2, compute-3$/,
      );
      assert.match(lines[2]!, /^ {2}host-reachable: .* — compute-9$/);
      assert.match(
        lines[3]!,
        /^ {2}held: compute-7 \(went silent in a blocked threshold event\) until .+ \(in .+\), unless it reports again$/,
      );
      const json = (await lifeguard(['status', '--json'], env)).json<SystemStatus>();
      assert.equal(json.admission?.stoppedBy, 'all-services-stale');
      assert.deepEqual(
        json.admission?.held.map((each) => each.host),
        ['compute-7'],
      );
    } finally {
      await redis.del(`${prefix}:instance-ha:admission:last-cycle`);
    }
  });

  it('says the leader polls and fails while Nova cannot be read, not that no leader has polled', async () => {
    const summaries = new AdmissionSummaryStore(redis, prefix);
    await summaries.writeFailure(
      {
        at: new Date(Date.now() - 1_000).toISOString(),
        consecutiveFailures: 3,
        reason: 'the poll did not finish within 50 s (POLL + 5 s); it was aborted',
      },
      60,
    );
    try {
      const run = await lifeguard(['status'], env);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.slice(run.stdout.indexOf('Last poll')).split('\n').slice(0, 2);
      assert.match(
        lines[0]!,
        /^Last poll \(.+ ago\): failed, 3 in a row — nothing is fenced until the node monitor can read Nova again$/,
      );
      assert.match(lines[1]!, /^⚠ poll failed: the poll did not finish within 50 s/);
      assert.doesNotMatch(run.stdout, /no node-monitor leader has polled/);
      const json = (await lifeguard(['status', '--json'], env)).json<SystemStatus>();
      assert.equal(json.failedPoll?.consecutiveFailures, 3);
    } finally {
      await redis.del(`${prefix}:instance-ha:admission:last-failed-poll`);
    }
  });

  it('flags every kind of worker with no live process, in the table and in JSON', async () => {
    type Kinds = SystemStatus['workerKinds'];
    const kinds = async () => (await lifeguard(['status', '--json'], env)).json<SystemStatus>().workerKinds;
    const run = await lifeguard(['status'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^⚠ no live process of provisioning-blocks, port-status, node-monitor, evacuation-worker, instance-restart-worker, masakari-api, masakari-engine: what they do is not being done$/m,
    );
    assert.match(run.stdout, /^provisioning-blocks\s+0\s+MISSING\s+no live process registered$/m);
    assert.match(
      run.stdout,
      /^port-status\s+0\s+MISSING\s+no consumer on lifeguard\.port-status\.provisioning-complete \(not declared\)$/m,
    );
    assert.match(run.stdout, /^node-monitor\s+0\s+MISSING\s+no live process registered$/m);
    assert.match(run.stdout, /^fencing-worker\s+1\s+ok\s+/m);
    assert.deepEqual(
      (await kinds()).map((kind: Kinds[number]) => [kind.kind, kind.live, kind.missing]),
      [
        ['provisioning-blocks', 0, true],
        ['port-status', 0, true],
        ['node-monitor', 0, true],
        ['fencing-worker', 1, false],
        ['evacuation-worker', 0, true],
        ['instance-restart-worker', 0, true],
        ['masakari-api', 0, true],
        ['masakari-engine', 0, true],
      ],
    );

    // A record left by an evacuation worker on this machine that no longer answers is not a live
    // process; a consumer on the port-status queue is a live port-status subscriber.
    const staleKey = WorkerRegistry.workerKey(prefix, 'evacuation-worker', 'evacuator-gone');
    const now = new Date().toISOString();
    await redis.set(
      staleKey,
      JSON.stringify({
        service: 'evacuation-worker',
        instance: 'evacuator-gone',
        pid: 999_999,
        host: hostname(),
        httpHost: '127.0.0.1',
        httpPort: 1,
        startedAt: now,
        refreshedAt: now,
        version: '0.1.0',
      }),
      'EX',
      60,
    );
    await worker.amqp.declare((channel) => declareWorkQueue(channel, QUEUES.provisioningComplete, []));
    const subscriber = await worker.amqp.consume({
      queue: QUEUES.provisioningComplete,
      prefetch: 1,
      contract: 'test',
      handler: async () => undefined,
    });
    try {
      await waitFor('the port-status consumer', async () =>
        (await kinds()).some((kind) => kind.kind === 'port-status' && !kind.missing),
      );
      const evacuation = (await kinds()).find((kind) => kind.kind === 'evacuation-worker');
      assert.deepEqual(evacuation, {
        kind: 'evacuation-worker',
        live: 0,
        missing: true,
        detail: '1 registered, none answers on its health server',
      });
      const table = await lifeguard(['status'], env);
      assert.match(
        table.stdout,
        /^port-status\s+1\s+ok\s+consumers on lifeguard\.port-status\.provisioning-complete$/m,
      );
    } finally {
      await subscriber.stop();
      await redis.del(staleKey);
    }
  });

  it('reports an unreachable Redis by name and address, with exit status 1', async () => {
    const run = await lifeguard(['status'], { ...env, LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:1/0' });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^lifeguard: Redis is not reachable at redis:\/\/127\.0\.0\.1:1\/0/);
    assert.match(run.stderr, /docker compose up -d redis/);
  });

  it('without RabbitMQ still shows the rest, names RabbitMQ (password masked) and exits 1', async () => {
    const run = await lifeguard(['status'], {
      ...env,
      LIFEGUARD_AMQP_URL: 'amqp://guest:very-secret@127.0.0.1:1/',
    });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^Workers \(1 up\)$/m);
    assert.match(run.stdout, /^fencing\s+2\s+/m);
    assert.match(run.stdout, /^port-status\s+-\s+unknown\s+unknown: RabbitMQ could not be read$/m);
    assert.match(
      run.stdout,
      /^RabbitMQ queues\nunknown: RabbitMQ could not be read \(why: the last line\)$/m,
    );
    assert.match(
      run.stderr,
      /^lifeguard: RabbitMQ is not reachable at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1\//,
    );
    assert.equal(
      (run.stdout + run.stderr).match(/RabbitMQ is not reachable/g)?.length,
      1,
      'the reason is said once',
    );
    assert.doesNotMatch(run.stdout + run.stderr, /very-secret/);
  });

  it('names an invalid variable and exits 1', async () => {
    const run = await lifeguard(['status'], { ...env, LIFEGUARD_REDIS_URL: 'http://nowhere' });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /LIFEGUARD_REDIS_URL \(environment\): must be a redis:\/\/ or rediss:\/\/ URL/);
  });

  it('as a process: exit 0 with tables, 1 when Redis is unreachable, 2 for a wrong command line', async () => {
    const [ok, unreachable, usage] = await Promise.all([
      lifeguardProcess(['status'], env),
      lifeguardProcess(['status'], { ...env, LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:1/0' }),
      lifeguardProcess(['status', '--no-such-option'], env),
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^Workers \(1 up\)$/m);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /Redis is not reachable at redis:\/\/127\.0\.0\.1:1\/0/);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^lifeguard: unknown option '--no-such-option'$/m);
  });
});
