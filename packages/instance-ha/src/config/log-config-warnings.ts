import { describeConfigProblem, type Logger } from '@lifeguard/runtime';
import type { ConfigWarning } from './read-key.ts';

/**
 * Logs what reading config.yaml found, once per warning, the same way in every worker: a value that
 * could not be used as given (a default or a clamped value was used instead) at warn; a value kept
 * because the operator allowed it on purpose (`allowed`, e.g. a POLL below InstanceHA's minimum with
 * LIFEGUARD_UNSAFE_SHORT_INTERVALS) at info, so that a deliberate choice is not reported as a fault.
 */
export function logConfigWarnings(logger: Logger, warnings: ReadonlyArray<ConfigWarning>): void {
  for (const warning of warnings) {
    const message = `configuration: ${describeConfigProblem(warning)}`;
    if (warning.allowed) logger.info({ ...warning }, message);
    else logger.warn({ ...warning }, message);
  }
}
