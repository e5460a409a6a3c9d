import { type KdumpStore, KdumpWait, type KdumpWaitOutcome } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/**
 * The fencing worker's blocking kdump wait before power fencing (docs/instance-ha-rules.md#kdump): the
 * shared state machine of `KdumpWait` on the Redis clock the node monitor may already have started,
 * so a host the monitor admitted after KDUMP_TIMEOUT is decided at the first look, and a retried or
 * taken-over job does not wait again from zero. Packets are looked up once per `pollMilliseconds`.
 * The clock is left for `KdumpWait.settle` once the fence is recorded. `lastReportAt` is the host's
 * last report to Nova before this failure (the incident's evidence): a packet or clock from before it
 * is an earlier failure's and never makes this one kdump-fenced.
 * @returns `kdump-fenced` when a packet arrived within KDUMP_TIMEOUT, `timed-out` when KDUMP_TIMEOUT
 *   passed since the clock's first start without one
 * @throws the Redis error of a failed look-up
 */
export async function waitForKdump(
  store: KdumpStore,
  host: string,
  timeoutSeconds: number,
  logger: Logger,
  pollMilliseconds = 1000,
  lastReportAt: Date | null = null,
): Promise<KdumpWaitOutcome> {
  const outcome = await new KdumpWait(store, timeoutSeconds).untilDecided(
    host,
    pollMilliseconds,
    (waitStartedAt) =>
      logger.info(
        { host, waitStartedAt: waitStartedAt.toISOString(), timeoutSeconds },
        'waiting for fence_kdump packets',
      ),
    lastReportAt,
  );
  logger.info(
    {
      host,
      decision: outcome.decision,
      waitStartedAt: outcome.waitStartedAt?.toISOString() ?? null,
      sleeps: outcome.sleeps,
      timeoutSeconds,
    },
    'kdump wait decided',
  );
  return outcome;
}
