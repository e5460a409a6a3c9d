import { type Logger, parseJobData } from '@lifeguard/runtime';
import type { Job } from 'bullmq';
import type { z } from 'zod';

/** One attempt of a fencing-queue job whose data names a host and its incident. */
export interface JobAttempt<Data> {
  /** The job's data, parsed. */
  data: Data;
  /** This attempt's number, counted from 1. */
  attempt: number;
  /** The worker's logger with `host`, `incidentId`, `jobId` and `attempt` bound. */
  logger: Logger;
}

/**
 * Starts an attempt of a fencing-queue job: parses its data and binds a child logger to it.
 * @param contract names the job's data in the error message, for example `fence job data`
 * @throws UnrecoverableError (bullmq) when the data does not match `schema` (see parseJobData)
 */
export function beginJobAttempt<Schema extends z.ZodType<{ host: string; incidentId: string }>>(
  job: Job,
  schema: Schema,
  contract: string,
  logger: Logger,
): JobAttempt<z.output<Schema>> {
  const data = parseJobData(schema, job, contract, logger);
  const attempt = job.attemptsMade + 1;
  return {
    data,
    attempt,
    logger: logger.child({ host: data.host, incidentId: data.incidentId, jobId: job.id, attempt }),
  };
}
