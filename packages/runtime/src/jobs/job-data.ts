import { ContractViolationError, parseWith } from '@lifeguard/contracts';
import { type Job, UnrecoverableError } from 'bullmq';
import type { z } from 'zod';
import type { Logger } from '../logger.ts';

/**
 * Validates a BullMQ job's data against its contract at the worker boundary and returns the parsed
 * data. Data that does not match can never succeed on a retry, so the failure is logged (error
 * level, with the job's `jobId`) and thrown as BullMQ's UnrecoverableError, which fails the job at
 * once without spending its remaining attempts.
 * @param contract names the job's data in the message, for example `fence job data`
 * @throws UnrecoverableError (bullmq) whose message is `invalid <contract>: <field>: <problem>; …`,
 *   naming every failing field
 */
export function parseJobData<Schema extends z.ZodType>(
  schema: Schema,
  job: Pick<Job, 'id' | 'data'>,
  contract: string,
  logger: Logger,
): z.output<Schema> {
  try {
    return parseWith(schema, job.data, contract);
  } catch (error) {
    if (!(error instanceof ContractViolationError)) throw error;
    const reason = `invalid ${error.message}`;
    logger.error({ jobId: job.id }, reason);
    throw new UnrecoverableError(reason);
  }
}
