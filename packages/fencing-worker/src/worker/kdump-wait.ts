import type { KdumpStore } from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/**
 * Waits for a failed host's crash kernel to announce itself, as InstanceHA's kdump state machine
 * (docs/instance-ha-rules.md#kdump): a fence_kdump packet from the host within KDUMP_TIMEOUT seconds means the host is
 * in its crash kernel (kdump-fenced: no power fencing). The wait clock is the one in Redis that the
 * node monitor may already have started (`KdumpStore.startWait`), so a retried or taken-over job
 * does not wait again from zero. Packets are looked up once per `pollMilliseconds`.
 * @returns true when a packet arrived (kdump-fenced), false when KDUMP_TIMEOUT passed without one
 */
export async function waitForKdump(
  store: KdumpStore,
  host: string,
  timeoutSeconds: number,
  logger: Logger,
  pollMilliseconds = 1000,
): Promise<boolean> {
  const startedAt = await store.startWait(host);
  logger.info(
    { host, waitStartedAt: startedAt.toISOString(), timeoutSeconds },
    'waiting for fence_kdump packets',
  );
  for (;;) {
    if (await store.packetWithin(host, timeoutSeconds)) {
      await store.clearWait(host);
      return true;
    }
    if (Date.now() - startedAt.getTime() >= timeoutSeconds * 1000) {
      await store.clearWait(host);
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, pollMilliseconds));
  }
}
