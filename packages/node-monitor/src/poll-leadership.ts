import type { AdmissionSummaryStore } from '@lifeguard/instance-ha';
import type { LeaderLease, Logger } from '@lifeguard/runtime';
import type { NodeMonitorMetrics } from './metrics.ts';
import type { PollLoop, PollLoopOptions } from './poll-loop.ts';

/** Keeps the leader gauge and the log in step with the lease, and wakes the loop when this replica leads. */
export function followLeadership(
  lease: LeaderLease,
  loop: PollLoop,
  metrics: NodeMonitorMetrics,
  logger: Logger,
): void {
  lease.on('acquired', (token: number) => {
    metrics.leader.set(1);
    logger.info({ fencingToken: token }, 'this node monitor now leads: polling');
    loop.wake();
  });
  lease.on('lost', () => {
    metrics.leader.set(0);
    // What this replica saw as leader is not the cloud's state once another leads.
    metrics.allServicesStaleNow.set(0);
    logger.warn('this node monitor lost the leader lease: standing by');
  });
  lease.on('released', () => {
    metrics.leader.set(0);
    metrics.allServicesStaleNow.set(0);
    logger.info('this node monitor released the leader lease (stopping)');
  });
}

/**
 * The poll loop's `onFailure`: records each failed poll (when, how many in a row, why) for the
 * operator tools, kept three polls (at least 30 s); a record that cannot be written is logged only.
 */
export function recordFailedPolls(
  summaries: Pick<AdmissionSummaryStore, 'writeFailure'>,
  pollSeconds: number,
  logger: Logger,
): NonNullable<PollLoopOptions['onFailure']> {
  return ({ at, consecutiveFailures, error }) => {
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    summaries
      .writeFailure({ at: at.toISOString(), consecutiveFailures, reason }, Math.max(30, 3 * pollSeconds))
      .catch((failure: unknown) => logger.warn({ err: failure }, 'failed poll not recorded'));
  };
}
