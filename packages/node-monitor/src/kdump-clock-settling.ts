import {
  type Incident,
  type InstanceHaConfig,
  judgeHostReports,
  type KdumpClockHost,
  type KdumpStore,
  kdumpClocksToSettle,
  type ServiceView,
} from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';

/**
 * With CHECK_KDUMP, settles the kdump wait clock of every host that reports to Nova again with no
 * incident open (it came back during its wait; docs/instance-ha-rules.md#kdump): its next failure
 * waits a full KDUMP_TIMEOUT of its own. The rule is kdumpClocksToSettle; this reads the clocks,
 * applies it and logs. A failed read or write is logged and tried again next cycle; the kdump gate
 * ignores a clock older than the host's last report meanwhile.
 */
export async function settleKdumpClocks(
  services: ReadonlyArray<ServiceView>,
  open: ReadonlyMap<string, Incident>,
  dependencies: { readonly kdump: KdumpStore; readonly config: InstanceHaConfig; readonly logger: Logger },
): Promise<void> {
  const { kdump, config, logger } = dependencies;
  try {
    const clocks = await kdump.allWaitStarts();
    if (clocks.size === 0) return;
    const byShortHost = new Map(services.map((service) => [service.shortHost, service]));
    const known = new Map<string, KdumpClockHost | null>();
    for (const host of clocks.keys()) {
      const service = byShortHost.get(host);
      known.set(
        host,
        service === undefined
          ? null
          : {
              reporting: judgeHostReports(service, config.deltaSeconds).reporting,
              forcedDown: service.forcedDown,
              incidentOpen: open.has(host),
            },
      );
    }
    for (const host of kdumpClocksToSettle(known)) {
      await kdump.clearWait(host);
      logger.info(
        { host, waitStartedAt: clocks.get(host)?.toISOString() },
        'host reports to Nova again: its kdump wait clock is settled',
      );
    }
  } catch (error) {
    logger.warn({ err: error }, 'kdump wait clocks could not be settled; trying again next cycle');
  }
}
