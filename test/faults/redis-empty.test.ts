// Redis restarted empty mid incident. lifeguard as `npm start` runs it on cloud-sim (the demo cloud,
// fence_redfish against cloud-sim's Redfish BMCs), but on a redis-server of the test's own (no
// persistence, a free port), so it can be restarted empty or flushed without touching the shared one.
// A host is killed; once it is fenced, forced down, marked and its servers are being rebuilt elsewhere,
// Redis loses its memory (SIGKILL and restart; or FLUSHDB on a live server). The test then reads what
// happened from the events exchange, the node monitor's metrics and cloud-sim's own record: the loss is
// noticed and announced, no fence runs before the rebuild, the incident is rebuilt from the host's
// disabled_reason marker and finishes; no host powered off twice, no server evacuated twice.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LifeguardEvent } from '@lifeguard/contracts';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import {
  createTestVhost,
  type PrivateRedis,
  randomKeyPrefix,
  startPrivateRedis,
  type TestVhost,
  waitFor,
} from '@lifeguard/testing';
import { Redis } from 'ioredis';
import { CloudRecorder } from '../e2e/support/cloud-recorder.ts';
import { EventTimeline } from '../e2e/support/event-timeline.ts';
import { StackRun } from '../e2e/support/stack-run.ts';
import { recordFaultRow } from './support/fault-table.ts';

type Fault = 'restart' | 'flushdb';

interface Deployment {
  readonly redis: PrivateRedis;
  readonly vhost: TestVhost;
  readonly timeline: EventTimeline;
  readonly run: StackRun;
  readonly recorder: CloudRecorder;
}

async function startDeployment(label: string): Promise<Deployment> {
  const redis = await startPrivateRedis();
  const vhost = await createTestVhost(label);
  const timeline = await EventTimeline.start(vhost.url);
  const run = await StackRun.start({
    amqpUrl: vhost.url,
    keyPrefix: randomKeyPrefix(label),
    redisUrl: redis.url(0),
    cloud: {
      kind: 'simulated',
      reportIntervalSeconds: 1,
      serviceDownTimeSeconds: 4,
      bootMilliseconds: 1000,
      evacuationAcceptMilliseconds: 0,
      // Long enough that Redis loses its memory while the servers are still being rebuilt.
      evacuationRebuildMilliseconds: 8000,
    },
    instanceHa: { POLL: '1', DELTA: '4' },
  });
  return { redis, vhost, timeline, run, recorder: new CloudRecorder(run.stack.cloudSim!) };
}

async function stopDeployment(deployment: Deployment | null): Promise<void> {
  if (!deployment) return;
  deployment.recorder.stop();
  await deployment.run.stop().catch(() => undefined);
  await deployment.timeline.close();
  await deployment.vhost.delete();
  await deployment.redis.stop();
}

/** How often the host's power went from on to off (a second one would be a second fence). */
function powerOffs(recorder: CloudRecorder, host: string, since: number): number {
  recorder.sample();
  let count = 0;
  let poweredOn: boolean | null = null;
  for (const change of recorder.hostHistory(host)) {
    if (change.at >= since && poweredOn === true && !change.state.poweredOn) count++;
    poweredOn = change.state.poweredOn;
  }
  return count;
}

/** The time an event arrived at the test's subscriber. */
function arrival(timeline: EventTimeline, event: LifeguardEvent): number {
  return timeline.received.find((each) => each.event.id === event.id)!.receivedAt;
}

async function loseMemory(redis: PrivateRedis, fault: Fault): Promise<void> {
  if (fault === 'restart') {
    await redis.restart(16);
    return;
  }
  const client = new Redis(redis.url(0));
  try {
    await client.flushdb();
  } finally {
    client.disconnect();
  }
}

describe('fault: Redis restarted empty mid incident', { timeout: 600_000 }, () => {
  let deployment: Deployment | null = null;

  after(async () => {
    await stopDeployment(deployment);
  });

  const cases: ReadonlyArray<[Fault, string]> = [
    ['restart', 'Redis restarted empty (no persistence) mid evacuation'],
    ['flushdb', 'Redis database flushed (FLUSHDB) mid evacuation'],
  ];
  for (const [fault, title] of cases) {
    it(`${title}: noticed and alerted, no fence before the rebuild, the incident rebuilt from the disabled_reason marker and finished once`, async (t) => {
      await stopDeployment(deployment);
      deployment = await startDeployment(`faults-redis-empty-${fault}`);
      const { run, timeline, recorder, redis } = deployment;
      const sim = run.stack.cloudSim!;
      await run.keepingLinesOnFailure(`redis-empty-${fault}`, async () => {
        await run.pollCycles(2);

        const source = run.stack.layout!.protectedHosts[1]!;
        const onSource = sim.model.servers.onHost(source).map((server) => server.id);
        const killedAt = Date.now();
        sim.killHost(source);
        const down = await timeline.waitFor('host.down', (event) => event.data.host === source, 60_000);
        const incidentId = down.data.incidentId;
        const started = await timeline.waitFor(
          'host.evacuation.started',
          (event) => event.data.incidentId === incidentId,
          120_000,
        );
        const servers = started.data.instanceCount;
        assert.ok(servers >= 1, 'the host runs evacuable servers');
        // Mid evacuation: the first evacuate call was accepted, the servers are still rebuilding.
        await waitFor(
          'a server of the host being rebuilt',
          () => Object.keys(sim.evacuateCalls()).length > 0,
          60_000,
          50,
        );
        const inFlightEvacuations = Object.keys(sim.evacuateCalls()).length;
        const marker = parseDisabledReason(sim.model.host(source).disabledReason);
        assert.deepEqual([marker.kind, marker.incidentId], ['evacuating', incidentId]);

        await loseMemory(redis, fault);
        const faultEndedAt = Date.now();

        const lost = await timeline.waitFor('redis.memory.lost', () => true, 120_000);
        const rebuiltAt = arrival(timeline, lost);
        assert.deepEqual(
          lost.data.restoredIncidents,
          [{ host: source, incidentId }],
          "the incident is re-opened under its marker's id",
        );
        assert.ok(
          (await run.metric('node-monitor', 'lifeguard_redis_memory_lost_total')) >= 1,
          'lifeguard_redis_memory_lost_total counted the loss',
        );
        const alertLine = run
          .records('node-monitor')
          .find((record) => String(record.msg ?? '').startsWith('ALERT: Redis lost its memory'));
        assert.ok(alertLine, 'the node monitor logged the loss at error');
        assert.equal(alertLine.level, 50);

        const ended = await waitFor(
          `the end of the evacuation of ${incidentId}`,
          () =>
            timeline.events.find(
              (event) =>
                (event.type === 'host.evacuated' || event.type === 'host.evacuation.failed') &&
                event.data.incidentId === incidentId,
            ),
          240_000,
          100,
        );
        assert.equal(ended.type, 'host.evacuated', `the evacuation ended: ${JSON.stringify(ended.data)}`);
        const evacuated = ended as Extract<LifeguardEvent, { type: 'host.evacuated' }>;
        const secondsToResume = (arrival(timeline, lost) - faultEndedAt) / 1000;

        // No fence ran on a blank memory: every fence re-check after the fault came after the rebuild.
        const fenceChecks = run
          .records('fencing-worker')
          .filter(
            (record) =>
              String(record.msg ?? '').startsWith('fence re-check before fencing') &&
              Number(record.time) >= faultEndedAt,
          );
        for (const record of fenceChecks) {
          assert.ok(Number(record.time) >= rebuiltAt - 1000, 'no fence re-check before the rebuild');
        }
        const refusals = await run.metric('fencing-worker', 'lifeguard_fence_refused_total', {
          reason: 'redis-memory-lost',
        });

        const hostDowns = timeline
          .ofType('host.down')
          .filter((event) => event.data.incidentId === incidentId);
        assert.ok(
          hostDowns.some((event) => event.data.resume),
          'the rebuilt incident was admitted again as a resume',
        );
        const fencedEvents = timeline
          .ofType('host.fenced')
          .filter((event) => event.data.incidentId === incidentId);
        assert.ok(
          fencedEvents.every((event) => event.data.proof === 'power-off-confirmed'),
          'the rebuilt incident was fenced by reading the power back, not on the marker',
        );

        const fencedTwice = powerOffs(recorder, source, killedAt) - 1;
        const evacuatedServers = onSource.filter((id) => sim.evacuateCalls(id) >= 1);
        const evacuatedTwice = onSource.filter((id) => sim.evacuateCalls(id) > 1).length;
        const reported = new Set(timeline.ofType('instance.evacuated').map((event) => event.data.instanceId));
        const eventsLost = evacuatedServers.filter((id) => !reported.has(id)).length;
        recorder.sample();
        const notActive = evacuatedServers.filter((id) => recorder.activeElsewhere(id, source) === null);
        t.diagnostic(
          `host.evacuated lists ${evacuated.data.evacuatedInstances.length} of ${evacuatedServers.length} evacuated servers`,
        );
        assert.equal(fencedTwice, 0, 'the host was powered off once');
        assert.equal(evacuatedTwice, 0, 'no server was evacuated twice');
        assert.equal(eventsLost, 0, 'every evacuated server has its instance.evacuated');
        assert.deepEqual(notActive, [], 'every evacuated server is ACTIVE elsewhere');
        t.diagnostic(
          `${fault}: ${inFlightEvacuations}/${servers} evacuations in flight; rebuild ${secondsToResume.toFixed(1)} s after the fault; ${fencedEvents.length} host.fenced, ${hostDowns.length} host.down; ${refusals} fences refused`,
        );
        recordFaultRow({
          fault: title,
          inFlight: `1 incident (${servers} instances, ${inFlightEvacuations} evacuating)`,
          eventsLost,
          duplicateEffects: fencedTwice + evacuatedTwice,
          secondsToResume,
          outcome: `alert LifeguardRedisMemoryLost; incident rebuilt from disabled_reason; ${refusals} fence(s) refused`,
        });
      });
    });
  }
});
