import {
  type AdmissionDecision,
  type AdmissionSummaryStore,
  admissionSummaryOf,
} from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/** Keeps the cycle's summary for the operator tools, for three polls (a failed write is logged only). */
export async function keepAdmissionSummary(
  dependencies: {
    readonly admissionSummaries?: Pick<AdmissionSummaryStore, 'write'>;
    readonly logger: Logger;
  },
  pollSeconds: number,
  decision: AdmissionDecision,
  now: Date,
): Promise<void> {
  await dependencies.admissionSummaries
    ?.write(admissionSummaryOf(decision, now), Math.max(30, 3 * pollSeconds))
    .catch((error: unknown) => dependencies.logger.warn({ err: error }, 'admission summary not written'));
}
