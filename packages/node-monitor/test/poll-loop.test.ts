import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, createMetricsRegistry } from '@lifeguard/runtime';
import { CapturedLines, waitFor } from '@lifeguard/testing';
import {
  type CycleReport,
  createNodeMonitorMetrics,
  NotLeaderError,
  PollDeadlineError,
  PollLoop,
  pollDeadlineMilliseconds,
} from '../src/index.ts';

const logger = createLogger({ service: 'node-monitor-test', level: 'silent' });
const report: CycleReport = {
  services: 1,
  stale: 0,
  skipped: 0,
  decision: null as never,
  published: [],
  recoveryRequested: [],
  durationSeconds: 0,
  leadershipLost: false,
  earlyPoll: null,
};

function loop(runCycle: () => Promise<CycleReport>, isLeader: () => boolean, pollSeconds = 0.02) {
  const metrics = createNodeMonitorMetrics(createMetricsRegistry('test'));
  return {
    metrics,
    loop: new PollLoop({ runCycle, isLeader, pollSeconds, standbyCheckMilliseconds: 10, logger, metrics }),
  };
}

describe('PollLoop (docs/instance-ha-rules.md#poll, docs/instance-ha-rules.md#metrics)', () => {
  it('is ready only after the first good poll as leader', async () => {
    let calls = 0;
    const { loop: poll } = loop(
      async () => {
        calls++;
        return report;
      },
      () => true,
    );
    assert.equal(poll.ready, false);
    poll.start();
    await waitFor('a good poll', () => calls >= 1 && poll.ready);
    await poll.stop();
  });

  it('runs the next cycle at the early poll a cycle asks for, long before POLL', async () => {
    const started: number[] = [];
    let asked = 0;
    const { loop: poll } = loop(
      async () => {
        started.push(Date.now());
        if (started.length > 1) return report;
        asked = Date.now() + 100;
        return { ...report, earlyPoll: { at: new Date(asked), host: 'compute1' } };
      },
      () => true,
      600,
    );
    poll.start();
    try {
      await waitFor('the early poll', () => started.length >= 2, 10_000, 10);
      // A timer may fire a millisecond or two early against Date.now().
      assert.ok(started[1]! >= asked - 5, `not before the moment asked for (${started[1]! - asked} ms)`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(started.length, 2, 'then POLL (600 s) again: no third cycle');
    } finally {
      await poll.stop();
    }
  });

  it('pollSoon ends a POLL-long sleep at once, and during a cycle makes the next one start right after it', async () => {
    let cycles = 0;
    let release: (() => void) | null = null;
    const { loop: poll } = loop(
      async () => {
        cycles++;
        if (cycles === 2) await new Promise<void>((resolve) => (release = resolve));
        return report;
      },
      () => true,
      600,
    );
    poll.start();
    try {
      await waitFor('the first cycle', () => cycles === 1);
      poll.pollSoon();
      await waitFor('the second cycle, long before POLL (600 s)', () => cycles === 2 && release !== null);
      poll.pollSoon();
      release!();
      await waitFor('a third cycle right after the second, asked for while it ran', () => cycles === 3);
    } finally {
      await poll.stop();
    }
  });

  it('counts consecutive failures, tries again within POLL (jittered, never later, never backed off), withdraws readiness after 3, and resets on success', async () => {
    let cycles = 0;
    let fail = true;
    const waits: number[] = [];
    const failures: Array<{ consecutiveFailures: number; error: unknown }> = [];
    const metrics = createNodeMonitorMetrics(createMetricsRegistry('test'));
    const poll = new PollLoop({
      onFailure: (failure) => failures.push(failure),
      runCycle: async () => {
        cycles++;
        if (fail) throw new Error('Nova unreachable');
        return report;
      },
      isLeader: () => true,
      pollSeconds: 0.02,
      standbyCheckMilliseconds: 10,
      logger,
      metrics,
      onSleep: (milliseconds) => waits.push(Math.round(milliseconds)),
    });
    poll.start();
    await waitFor('four failed polls', () => cycles >= 4, 10_000, 5);
    assert.equal(poll.ready, false, 'not ready after 3 consecutive failures');
    assert.deepEqual(
      failures.slice(0, 4).map((each) => [each.consecutiveFailures, (each.error as Error).message]),
      [1, 2, 3, 4].map((count) => [count, 'Nova unreachable']),
      'each failed poll is reported with how many failed in a row',
    );
    assert.ok(poll.failures >= 3);
    // the waits the loop planned after the first four failures: within (0.8 × POLL, POLL], POLL 20 ms
    for (const wait of waits.slice(0, 4)) assert.ok(wait >= 16 && wait <= 20, `${waits.slice(0, 4)}`);
    fail = false;
    await waitFor('recovery', () => poll.failures === 0 && poll.ready, 10_000, 5);
    assert.equal(waits.at(-1), 20, 'after a good poll the loop waits POLL again');
    assert.equal(
      (await metrics.pollCycles.get()).values.find((value) => value.labels.result === 'error')!.value >= 3,
      true,
    );
    await poll.stop();
  });

  it('aborts a cycle that runs past its deadline, counts it as a failed poll naming why, and polls again within POLL', async () => {
    const lines = new CapturedLines();
    const deadlines: AbortSignal[] = [];
    const waits: number[] = [];
    const poll = new PollLoop({
      // A Nova that never answers: the cycle ends only when its deadline aborts it.
      runCycle: (deadline) => {
        deadlines.push(deadline);
        return new Promise<CycleReport>((_resolve, reject) =>
          deadline.addEventListener('abort', () => reject(deadline.reason)),
        );
      },
      isLeader: () => true,
      pollSeconds: 0.05,
      pollDeadlineMilliseconds: 30,
      standbyCheckMilliseconds: 10,
      logger: createLogger({ service: 'node-monitor-test', level: 'info', destination: lines }),
      metrics: createNodeMonitorMetrics(createMetricsRegistry('test')),
      onSleep: (milliseconds) => waits.push(milliseconds),
    });
    poll.start();
    await waitFor('two aborted cycles', () => deadlines.length >= 3 && poll.failures >= 2, 10_000, 5);
    await poll.stop();
    assert.ok(deadlines.slice(0, 2).every((deadline) => deadline.reason instanceof PollDeadlineError));
    assert.ok(
      waits.slice(0, 2).every((wait) => wait > 40 && wait <= 50),
      `${waits}`,
    );
    const failed = lines.records().filter((line) => String(line.msg).startsWith('Poll failed'));
    assert.match(
      String((failed[0]!.err as { message: string }).message),
      /ran longer than its deadline \(0\.03s, POLL \+ 5s unless set otherwise\)/,
    );
  });

  it('gives each cycle a deadline of POLL + 5 s', () => {
    assert.equal(pollDeadlineMilliseconds(45), 50_000);
    assert.equal(pollDeadlineMilliseconds(5), 10_000);
  });

  it('does not poll while standing by, and is ready as a standby once it checked the lease', async () => {
    let calls = 0;
    let leader = false;
    const { loop: poll } = loop(
      async () => {
        calls++;
        return report;
      },
      () => leader,
    );
    poll.start();
    await waitFor('a standby check', () => poll.ready);
    assert.equal(calls, 0);
    leader = true;
    poll.wake();
    await waitFor('polling as leader', () => calls >= 1);
    await poll.stop();
  });

  it('treats NotLeaderError as a lost lease, not a poll failure', async () => {
    let leader = true;
    let calls = 0;
    const { loop: poll } = loop(
      async () => {
        calls++;
        leader = false;
        throw new NotLeaderError();
      },
      () => leader,
    );
    poll.start();
    await waitFor('the cycle', () => calls === 1 && poll.ready);
    assert.equal(poll.failures, 0);
    await poll.stop();
  });

  it('reports not alive when a cycle hangs longer than 3 × POLL', async () => {
    let release: () => void = () => undefined;
    const { loop: poll } = loop(
      () =>
        new Promise<CycleReport>((resolve) => {
          release = () => resolve(report);
        }),
      () => true,
      0.01,
    );
    poll.start();
    assert.equal(poll.alive, true);
    await waitFor('the stall to show', () => !poll.alive, 5_000, 5);
    release();
    await waitFor('alive again', () => poll.alive, 5_000, 5);
    await poll.stop();
  });
});
