import type { EvacuateHostJobData, TargetHostUse } from '@lifeguard/contracts';
import type {
  InstanceHaConfig,
  PlacementDirective,
  PlacementDirectiveStore,
  PlacementOutcome,
} from '@lifeguard/instance-ha';
import { type ComputeApi, type ComputeService, findComputeService } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import type { ReservedHostManager } from './reserved-host-manager.ts';
import { reservedHostUnusable, segmentPlacement } from './segment-placement.ts';

/** Where a host's instances are sent, decided once when its evacuation is planned. */
export interface ChosenPlacement {
  /** The reserved host this incident holds (claimed), or null. */
  readonly reservedHost: string | null;
  /** This evacuation enabled the reserved host's compute service (it goes back to the pool after a failure). */
  readonly reservedHostEnabled: boolean;
  /** The evacuate target of the instance jobs, or null (the scheduler). */
  readonly targetHost: string | null;
  readonly targetHostUse: TargetHostUse;
  /** The reserved host is announced in `host.evacuation.started` (in service from the start). */
  readonly announced: string | null;
  /** Set when nothing may be evacuated: a `reserved_host` segment with no usable reserved host. */
  readonly refusal: string | null;
}

type Directives = Pick<
  PlacementDirectiveStore,
  'forIncident' | 'recordOutcome' | 'updateOutcome' | 'outcome'
>;

/**
 * The placement of a failed host's servers: the host's Masakari segment decides when it gave a
 * directive (segmentPlacement, docs/migrating-from-masakari.md#recovery-methods), else RESERVED_HOSTS'
 * pool as InstanceHA does (docs/evacuation-worker.md#reserved-hosts-reserved_hosts). What a directive's
 * evacuation did is recorded for the Masakari engine (PlacementOutcome).
 */
export class HostPlacement {
  constructor(
    private readonly compute: ComputeApi,
    private readonly reserved: ReservedHostManager,
    private readonly directives: Directives,
    private readonly config: Pick<InstanceHaConfig, 'reservedHosts' | 'forceReservedHostEvacuation'>,
  ) {}

  /** Chooses the placement of `instanceCount` instances of the job's host (none: no reserved host). */
  async choose(
    data: Pick<EvacuateHostJobData, 'host' | 'incidentId'>,
    serviceId: string,
    instanceCount: number,
    log: Logger,
  ): Promise<ChosenPlacement> {
    const directive = await this.directives.forIncident(data.host, data.incidentId);
    if (directive !== null && instanceCount > 0) return this.fromSegment(data, directive, log);
    let reservedHost: string | null = null;
    if (this.config.reservedHosts && instanceCount > 0) {
      const service = await findComputeService(this.compute, data.host, serviceId);
      if (service !== null) reservedHost = await this.reserved.acquire(service, data.incidentId);
    }
    return {
      reservedHost,
      reservedHostEnabled: reservedHost !== null,
      targetHost: this.config.forceReservedHostEvacuation ? reservedHost : null,
      targetHostUse: 'first-attempt',
      announced: reservedHost,
      refusal: null,
    };
  }

  private async fromSegment(
    data: Pick<EvacuateHostJobData, 'host' | 'incidentId'>,
    directive: PlacementDirective,
    log: Logger,
  ): Promise<ChosenPlacement> {
    const services =
      directive.method === 'auto' ? [] : await this.compute.listServices({ binary: 'nova-compute' });
    const placement = segmentPlacement({ directive, failedHost: data.host, services });
    const unusable = (service: ComputeService | null) =>
      reservedHostUnusable(service?.host ?? '', service, data.host);
    const taken =
      placement.use === null
        ? null
        : await this.reserved.acquireFrom(placement.candidates, data.incidentId, {
            enable: placement.enable === 'plan',
            unusable,
          });
    const segment = `recovery_method ${directive.method} of segment ${directive.segment.name}`;
    const without = placement.unusable.map((each) => `${each.host}: ${each.why}`).join('; ');
    const none = `no usable reserved host (${without || (directive.reservedHosts.length === 0 ? 'the segment has none' : 'each is held by another incident')})`;
    const refusal =
      taken === null && placement.withoutReservedHost === 'refuse'
        ? `${segment}: ${none}; nothing evacuated (Nova's scheduler is not used for this method)`
        : null;
    const reason =
      refusal ??
      (placement.use === null
        ? `${segment}: Nova's scheduler places the servers`
        : taken === null
          ? `${segment}: ${none}; Nova's scheduler places the servers`
          : placement.enable === 'plan'
            ? `${segment}: reserved host ${taken.host} takes the servers`
            : `${segment}: Nova's scheduler first; reserved host ${taken.host} held for a server it cannot place`);
    if (refusal !== null) log.error({ directive, unusable: placement.unusable }, reason);
    else log.info({ directive, reservedHost: taken?.host ?? null, unusable: placement.unusable }, reason);
    const inService = taken !== null && placement.enable === 'plan';
    await this.directives.recordOutcome(
      outcome(data, directive, {
        reservedHost: taken?.host ?? null,
        inService,
        enabled: taken?.enabled === true,
        refused: refusal !== null,
        reason,
      }),
    );
    return {
      reservedHost: taken?.host ?? null,
      reservedHostEnabled: taken?.enabled === true,
      targetHost: taken?.host ?? null,
      targetHostUse: placement.use ?? 'first-attempt',
      announced: inService ? taken!.host : null,
      refusal,
    };
  }

  /**
   * Puts the reserved host held for a segment's auto_priority into service, for a server the scheduler
   * could not place, and records it. @returns false when it cannot take servers now
   */
  async prepare(host: string, failedHost: string, incidentId: string, log: Logger): Promise<boolean> {
    const unusable = (service: ComputeService | null) => reservedHostUnusable(host, service, failedHost);
    const done = await this.reserved.putIntoService(host, incidentId, unusable);
    if (done === null) return false;
    const recorded = await this.directives.outcome(incidentId);
    if (recorded !== null && !recorded.inService) {
      await this.directives.updateOutcome(incidentId, {
        inService: true,
        enabled: recorded.enabled || done === 'enabled',
        reason: `${recorded.reason}; reserved host ${host} put into service for a server the scheduler could not place`,
      });
      log.info(
        { reservedHost: host },
        `Reserved host ${host} put into service: Nova's scheduler could not place a server of ${failedHost}`,
      );
    }
    return true;
  }

  /**
   * After a failed evacuation: a reserved host this evacuation enabled and nothing landed on goes back
   * to being a spare (disabled again), one only held is released; the outcome says whether it stays
   * in service.
   */
  async giveBack(reservedHost: string, enabledHere: boolean, incidentId: string): Promise<void> {
    const recorded = await this.directives.outcome(incidentId);
    const enabled = enabledHere || recorded?.enabled === true;
    if (!enabled) {
      // Never enabled here: it stays as it was (disabled and held only, or enabled by someone else).
      await this.reserved.release(reservedHost, incidentId);
      return;
    }
    const returned = (await this.reserved.returnToPool(reservedHost, incidentId)) === 'returned';
    if (returned && recorded !== null) await this.directives.updateOutcome(incidentId, { inService: false });
  }
}

function outcome(
  data: Pick<EvacuateHostJobData, 'host' | 'incidentId'>,
  directive: PlacementDirective,
  fields: Pick<PlacementOutcome, 'reservedHost' | 'inService' | 'enabled' | 'refused' | 'reason'>,
): PlacementOutcome {
  return {
    incidentId: data.incidentId,
    host: data.host,
    method: directive.method,
    ...fields,
    at: new Date().toISOString(),
  };
}
