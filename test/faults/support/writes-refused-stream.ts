import assert from 'node:assert/strict';
import { sleep, waitFor } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import type { ServiceProcess } from '../../../packages/provisioning-blocks/test/service-process.ts';
import {
  completeFromTwoConnections,
  type ServiceProcessSuite,
  seedBlockedPorts,
  waitForEveryPortActive,
} from '../../../packages/provisioning-blocks/test/support.ts';
import { recordFaultRow } from './fault-table.ts';
import { metricTotal, whenMetricExceeds } from './metrics.ts';
import { CompletionRecorder, countCompletions } from './provisioning-events.ts';

/** How long the stream is watched while Redis refuses writes, in milliseconds. */
const REFUSED_WINDOW_MILLISECONDS = 8000;

export interface WritesRefusedStreamOptions {
  readonly suite: ServiceProcessSuite;
  /** The Redis the service runs on (the suite's, or one of the test's own). */
  readonly redis: Redis;
  /** Its URL, when it is not the suite's (the service's LIFEGUARD_REDIS_URL). */
  readonly redisUrl?: string;
  /** A name for the key prefix, the instance and the completions queue. */
  readonly label: string;
  readonly ports: number;
  /** Makes Redis refuse writes (maxmemory, a full disk); resolves once it does. */
  refuse(): Promise<unknown>;
  /** Makes Redis accept writes again. */
  restore(): Promise<unknown>;
}

/** What the stream showed; the test that ran it asserts on it and records its row. */
export interface WritesRefusedStreamOutcome {
  /** Ports completed when Redis began refusing (after the requests already taken settled). */
  readonly completedWhenRefused: number;
  /** Ports completed after the refused window: equal to the above when nothing completed meanwhile. */
  readonly completedAfterWindow: number;
  readonly eventsLost: number;
  readonly duplicateEffects: number;
  /** From Redis accepting writes again to the first event published after, in seconds. */
  readonly secondsToResume: number | null;
  /** `redis-writes` in /readyz at the end (`ok` expected). */
  readonly readinessAtEnd: string | undefined;
  readonly service: ServiceProcess;
}

/**
 * A provisioning stream with Redis made to refuse writes half-way
 * (docs/failure-modes.md#redis-out-of-memory): `ports` blocked ports completed by a DHCP and an L2
 * agent's casts; once half are sent and some completed, `refuse()`; then the service is watched
 * until it reports the refusal (lifeguard_redis_writes_refused 1, /readyz failing `redis-writes`) and
 * for a window; then `restore()`, and the stream must finish: every port ACTIVE, the outbox drained,
 * the gauge back at 0.
 * @throws Error from a wait that timed out
 */
export async function runWritesRefusedStream(
  options: WritesRefusedStreamOptions,
): Promise<WritesRefusedStreamOutcome> {
  const { suite, redis, label, ports } = options;
  const prefix = suite.keyPrefix(label);
  const { stores, ids } = await seedBlockedPorts(redis, prefix, ports, 70);
  const recorder = await CompletionRecorder.start(suite.vhost.url, `fault.${label}.completions`);
  const service = suite.start({
    LIFEGUARD_AMQP_URL: suite.vhost.url,
    ...(options.redisUrl ? { LIFEGUARD_REDIS_URL: options.redisUrl } : {}),
    LIFEGUARD_REDIS_KEY_PREFIX: prefix,
    LIFEGUARD_INSTANCE_NAME: label,
    LIFEGUARD_PROVISIONING_RPC_SERVER: `${label}-host`,
    LIFEGUARD_PROVISIONING_NOTIFY_NOVA_ON_PORT_STATUS_CHANGES: 'false',
    LIFEGUARD_PROVISIONING_OUTBOX_CLAIM_IDLE_SECONDS: '2',
  });
  const metricsPort = await service.started(300_000);
  const completedPorts = async () =>
    (await Promise.all(ids.map((id) => stores.blocks.isObjectBlocked(id, 'port')))).filter(
      (blocked) => !blocked,
    ).length;
  const readiness = async () =>
    (
      (await (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).json()) as {
        checks: Record<string, string>;
      }
    ).checks['redis-writes'];

  let completedWhenRefused = -1;
  let completedAfterWindow = -1;
  let restoredAt = 0;
  try {
    await completeFromTwoConnections(suite.vhost.url, ids, {
      chunk: 50,
      beforeChunk: async (sent) => {
        if (completedWhenRefused >= 0 || sent < ports / 2) return;
        await whenMetricExceeds(metricsPort, 'lifeguard_provisioning_outbox_published_total', 50);
        await options.refuse();
        // Let the requests already taken finish or fail, then count what Redis holds.
        await sleep(1000);
        completedWhenRefused = await completedPorts();
      },
    });
    // The other half of the completions is now with the service while Redis refuses every write.
    await waitFor(
      'lifeguard_redis_writes_refused 1',
      async () => (await metricTotal(metricsPort, 'lifeguard_redis_writes_refused')) === 1,
      60_000,
      100,
    );
    await waitFor(
      '/readyz failing its redis-writes check',
      async () => (await readiness()) === 'failing',
      30_000,
      100,
    );
    await sleep(REFUSED_WINDOW_MILLISECONDS);
    completedAfterWindow = await completedPorts();
  } finally {
    await options.restore();
    restoredAt = Date.now();
  }
  const publishedAtRestore =
    (await metricTotal(metricsPort, 'lifeguard_provisioning_outbox_published_total')) ?? 0;
  const resumedAt = await whenMetricExceeds(
    metricsPort,
    'lifeguard_provisioning_outbox_published_total',
    publishedAtRestore,
    300_000,
  );
  await waitForEveryPortActive('every port ACTIVE once Redis accepts writes', redis, stores, ids);
  await waitFor('the outbox drained', async () => (await redis.xlen(stores.keys.outbox)) === 0, 60_000);
  await waitFor(
    'lifeguard_redis_writes_refused 0',
    async () => (await metricTotal(metricsPort, 'lifeguard_redis_writes_refused')) === 0,
    60_000,
    100,
  );
  const counted = countCompletions(ids, await recorder.drain());
  return {
    completedWhenRefused,
    completedAfterWindow,
    eventsLost: counted.lost,
    duplicateEffects: counted.duplicated,
    secondsToResume: resumedAt === null ? null : (resumedAt - restoredAt) / 1000,
    readinessAtEnd: await readiness(),
    service,
  };
}

/**
 * Records the stream's row in the fault table (`fault`; `struck`: what happened when Redis began
 * refusing; `operatorSees`: the log line named) and asserts what every such stream must show: nothing
 * completed while refused, completions still to come then, no event lost or doubled, `redis-writes`
 * ok at the end, and the service stopping cleanly on SIGTERM.
 */
export async function recordAndCheckWritesRefused(
  outcome: WritesRefusedStreamOutcome,
  row: { fault: string; ports: number; struck: string; operatorSees: string },
): Promise<void> {
  const completedWhileRefused = outcome.completedAfterWindow - outcome.completedWhenRefused;
  recordFaultRow({
    fault: row.fault,
    inFlight: `${row.ports} ports (${outcome.completedWhenRefused} completed when ${row.struck})`,
    eventsLost: outcome.eventsLost,
    duplicateEffects: outcome.duplicateEffects,
    secondsToResume: outcome.secondsToResume,
    outcome: `${row.operatorSees}, lifeguard_redis_writes_refused 1, /readyz 503; ${completedWhileRefused} ports completed while refused`,
  });
  assert.equal(completedWhileRefused, 0, 'ports completed while Redis refused writes');
  assert.ok(outcome.completedWhenRefused < row.ports, `completions were still to come when ${row.struck}`);
  assert.equal(outcome.eventsLost, 0, 'ports without a provisioning.complete event');
  assert.equal(outcome.duplicateEffects, 0, 'ports completed twice under different event ids');
  assert.equal(outcome.readinessAtEnd, 'ok');
  outcome.service.child.kill('SIGTERM');
  assert.equal((await outcome.service.exited()).code, 0);
}
