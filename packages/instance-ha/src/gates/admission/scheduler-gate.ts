import type { ComputeService } from '@lifeguard/openstack';

/** The `nova-scheduler` services as read this cycle, or the error of the read. */
export type SchedulerFacts = ReadonlyArray<Pick<ComputeService, 'state'>> | { readonly readError: string };

/** G9's judgement: `defer` stops the cycle; `readError` is set when the read failed and the cycle went on. */
export interface SchedulerJudgement {
  readonly verdict: 'pass' | 'defer';
  readonly reason: string;
  readonly readError: string | null;
}

/**
 * Gate G9, scheduler sanity (docs/instance-ha-rules.md#g9-scheduler): when Nova lists
 * `nova-scheduler` services and none is up, evacuated servers could not be placed, so fencing now
 * would only add downtime: the cycle defers. No scheduler listed, or a failed read, goes on.
 */
export function judgeSchedulers(schedulers: SchedulerFacts): SchedulerJudgement {
  if ('readError' in schedulers)
    return {
      verdict: 'pass',
      reason: 'nova-scheduler services could not be read',
      readError: schedulers.readError,
    };
  if (schedulers.length === 0)
    return { verdict: 'pass', reason: 'Nova lists no nova-scheduler service', readError: null };
  if (schedulers.some((scheduler) => scheduler.state === 'up'))
    return { verdict: 'pass', reason: 'a nova-scheduler service is up', readError: null };
  return {
    verdict: 'defer',
    reason: `none of ${schedulers.length} nova-scheduler services is up`,
    readError: null,
  };
}
