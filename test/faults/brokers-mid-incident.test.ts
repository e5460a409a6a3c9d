// test-file: runs alone (restarts the fault suite's own RabbitMQ and Redis, which every other fault file uses)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LifeguardEvent } from '@lifeguard/contracts';
import { EventJournal } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import { CloudRecorder } from '../e2e/support/cloud-recorder.ts';
import { StackRun } from '../e2e/support/stack-run.ts';
import { recordFaultRow } from './support/fault-table.ts';
import { type EngineRestart, restartSuiteRabbitmq, restartSuiteRedis } from './support/suite-engines.ts';

/** The chain every incident must publish (docs/instance-ha-rules.md), read back from the Redis journal. */
const CHAIN = ['host.down', 'host.fenced', 'host.evacuation.started', 'host.evacuated', 'host.reenabled'];

/**
 * A broker restarted in the middle of an incident, with the whole stack on cloud-sim
 * (docs/failure-modes.md#brokers): the incident completes, no host is fenced twice and no server
 * evacuated twice. What happened is read from lifeguard's event journal in Redis (which outlives a
 * RabbitMQ restart, unlike a test's queue) and from cloud-sim's own record of evacuate calls.
 */
describe('brokers restarted mid incident (whole stack on cloud-sim)', { timeout: 1_500_000 }, () => {
  let vhost: TestVhost;
  let redis: Redis;
  let run: StackRun;
  let recorder: CloudRecorder;
  const keyPrefix = randomKeyPrefix('fault-incident');

  before(async () => {
    vhost = await createTestVhost('fault-incident');
    redis = testRedis();
    redis.on('error', () => undefined);
    run = await StackRun.start({
      amqpUrl: vhost.url,
      keyPrefix,
      readyTimeoutSeconds: 600,
      cloud: {
        kind: 'simulated',
        reportIntervalSeconds: 1,
        serviceDownTimeSeconds: 4,
        bootMilliseconds: 1000,
        evacuationAcceptMilliseconds: 0,
        evacuationRebuildMilliseconds: 3000,
      },
      instanceHa: { POLL: '1', DELTA: '4' },
    });
    recorder = new CloudRecorder(run.stack.cloudSim!);
  });

  after(async () => {
    recorder?.stop();
    await run?.stop();
    await deleteKeysWithPrefix(redis, keyPrefix);
    await redis.quit();
    await vhost.delete();
  });

  /**
   * Kills `host`, restarts a broker with `restart` once the incident reached `restartAfter`, waits for
   * the incident to end (its servers ACTIVE elsewhere, the host re-enabled) and records the row.
   */
  async function incidentAcrossRestart(
    fault: string,
    host: string,
    restartAfter: string,
    restart: () => Promise<EngineRestart>,
  ): Promise<{ lost: string[]; fencedTwice: number; evacuatedTwice: string[] }> {
    const sim = run.stack.cloudSim!;
    const journal = new EventJournal(redis, keyPrefix);
    const servers = sim.model.servers.onHost(host).map((server) => server.id);
    const killedAt = Date.now();
    const hostEvents = async () =>
      (await journal.recentMatching(1000, (event) => (event.data as { host?: string }).host === host)).filter(
        (event) => Date.parse(event.occurredAt) >= killedAt,
      );
    sim.killHost(host);
    await waitFor(
      `${restartAfter} for ${host}`,
      async () => (await hostEvents()).some((event) => event.type === restartAfter),
      300_000,
      100,
    );
    const restarted = await restart();
    const down = (await hostEvents()).find((event) => event.type === 'host.down');
    const incidentId = (down?.data as { incidentId?: string } | undefined)?.incidentId;
    assert.ok(incidentId, `a host.down for ${host} in the journal`);
    const resumedAt = await waitFor(
      'the incident to go on after the restart',
      async () =>
        (await hostEvents()).find((event) => Date.parse(event.occurredAt) > restarted.answeringAt)
          ?.occurredAt,
      600_000,
      200,
    );
    await waitFor(
      `${host} re-enabled`,
      async () => (await hostEvents()).some((event) => event.type === 'host.reenabled'),
      600_000,
      500,
    );
    recorder.sample();
    const events: LifeguardEvent[] = await journal.incident(incidentId);
    const lost = CHAIN.filter((type) => !events.some((event) => event.type === type));
    const fences = new Set(
      (await hostEvents()).filter((event) => event.type === 'host.fenced').map((event) => event.id),
    );
    const evacuated = servers.filter((server) => sim.evacuateCalls(server) > 0);
    const evacuatedTwice = servers.filter((server) => sim.evacuateCalls(server) > 1);
    const notActiveElsewhere = evacuated.filter((server) => recorder.activeElsewhere(server, host) === null);
    recordFaultRow({
      fault,
      inFlight: `1 incident (${evacuated.length} servers evacuated), restarted after ${restartAfter}`,
      eventsLost: lost.length,
      duplicateEffects: Math.max(0, fences.size - 1) + evacuatedTwice.length,
      secondsToResume: (Date.parse(resumedAt) - restarted.answeringAt) / 1000,
      outcome: `incident completed (${notActiveElsewhere.length} evacuated servers not ACTIVE elsewhere); workers log the lost connection and reconnect`,
    });
    assert.ok(evacuated.length > 0, 'the incident evacuated servers');
    assert.deepEqual(notActiveElsewhere, [], 'evacuated servers not ACTIVE on another host');
    return { lost, fencedTwice: Math.max(0, fences.size - 1), evacuatedTwice };
  }

  it('RabbitMQ restarted mid incident: the incident completes, its host fenced once, each server evacuated once', async () => {
    const host = run.stack.layout!.protectedHosts[1]!;
    const outcome = await incidentAcrossRestart('RabbitMQ restarted mid incident', host, 'host.fenced', () =>
      restartSuiteRabbitmq({ how: 'stop' }),
    );
    assert.deepEqual(outcome.lost, [], 'events of the incident missing from its journal');
    assert.equal(outcome.fencedTwice, 0, 'the host fenced more than once');
    assert.deepEqual(outcome.evacuatedTwice, [], 'servers evacuated twice');
  });

  it('Redis restarted with append-only persistence mid incident: the incident resumes where it was', async () => {
    const host = run.stack.layout!.protectedHosts[2]!;
    const outcome = await incidentAcrossRestart(
      'Redis restarted (append-only) mid incident',
      host,
      'host.evacuation.started',
      () => restartSuiteRedis({ persistence: 'append-only', how: 'kill' }),
    );
    assert.deepEqual(outcome.lost, [], 'events of the incident missing from its journal');
    assert.equal(outcome.fencedTwice, 0, 'the host fenced more than once');
    assert.deepEqual(outcome.evacuatedTwice, [], 'servers evacuated twice');
  });
});
