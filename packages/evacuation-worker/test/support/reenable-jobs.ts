import { JOB_NAMES, JOB_QUEUES, type ReenableJobData, reenableJobId } from '@lifeguard/contracts';
import { bullmqPrefix } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { Queue } from 'bullmq';
import type { ReenableJobResult } from '../../src/index.ts';
import type { EvacuationBed } from './evacuation-bed.ts';

/**
 * Adds a `reenable` job for `host` as the recovery intake would, with the service's disabled reason
 * from Nova unless `options.disabledReason` is given; `options.beforeAdding` runs just before the add.
 * The caller closes the returned queue.
 */
export async function addReenableJob(
  test: EvacuationBed,
  host: string,
  incidentId: string | null,
  options: { disabledReason?: string | null; beforeAdding?: () => void } = {},
): Promise<{ queue: Queue; jobId: string }> {
  const queue = new Queue(JOB_QUEUES.recovery, { connection: test.redis, prefix: bullmqPrefix(test.prefix) });
  const service = await test.service(host);
  const data: ReenableJobData = {
    host,
    serviceId: service.id,
    incidentId,
    disabledReason:
      options.disabledReason !== undefined ? options.disabledReason : (service.disabled_reason ?? null),
    requestedAt: new Date().toISOString(),
  };
  const jobId = reenableJobId(host, incidentId);
  options.beforeAdding?.();
  await queue.add(JOB_NAMES.reenable, data, { jobId });
  return { queue, jobId };
}

/** Waits until the `reenable` job completed and returns its result. */
export function reenableResult(
  queue: Queue,
  jobId: string,
  timeoutMilliseconds = 20_000,
): Promise<ReenableJobResult> {
  return waitFor(
    `re-enable job ${jobId} to complete`,
    async () => {
      if ((await queue.getJobState(jobId)) !== 'completed') return false;
      return (await queue.getJob(jobId))?.returnvalue as ReenableJobResult;
    },
    timeoutMilliseconds,
  );
}
