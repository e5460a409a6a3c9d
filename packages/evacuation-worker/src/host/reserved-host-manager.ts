import { enableService, formatDisabledReason, type InstanceHaConfig } from '@lifeguard/instance-ha';
import { type ComputeApi, type ComputeService, findComputeService, markService } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import type { ReservedHostClaims } from './reserved-host-claims.ts';
import { matchingReservedHosts, reservedHostPool } from './reserved-hosts.ts';

/**
 * RESERVED_HOSTS (docs/instance-ha-rules.md#reserved-hosts): picks one spare for a failed host, claims it
 * atomically in Redis (ReservedHostClaims), enables it (3 attempts) and, when the evacuation fails and
 * nothing landed on it, disables it again with the `lifeguard-reserved:` marker (back to the pool).
 */
export class ReservedHostManager {
  constructor(
    private readonly compute: ComputeApi,
    private readonly claims: ReservedHostClaims,
    private readonly config: Pick<InstanceHaConfig, 'taggedAggregates' | 'evacuableTag'>,
    private readonly logger: Logger,
  ) {}

  private isPooled(service: ComputeService | null): boolean {
    if (service === null) return false;
    return service.status.includes('disabled') && (service.disabled_reason ?? '').includes('reserved');
  }

  /**
   * Claims and enables a matching spare, or returns the one this incident already holds. Null when
   * the pool has no match, every match is claimed, or enabling failed (the spare goes back to the pool).
   */
  async acquire(failed: ComputeService, incidentId: string): Promise<string | null> {
    const log = this.logger.child({ host: failed.host, incidentId });
    const held = await this.claims.heldBy(incidentId);
    if (held !== null) return (await this.enable(held, incidentId, log)) ? held : null;
    const services = await this.compute.listServices({ binary: 'nova-compute' });
    const pool = reservedHostPool(services, failed.host);
    if (pool.length === 0) {
      log.info('RESERVED_HOSTS: no reserved host in the pool');
      return null;
    }
    let aggregates: Awaited<ReturnType<ComputeApi['listAggregates']>> = [];
    if (this.config.taggedAggregates) {
      try {
        aggregates = await this.compute.listAggregates();
      } catch (error) {
        log.warn(
          { err: error },
          'RESERVED_HOSTS: aggregates could not be read; continuing without a reserved host',
        );
        return null;
      }
    }
    const candidates = matchingReservedHosts(failed, pool, {
      taggedAggregates: this.config.taggedAggregates,
      tag: this.config.evacuableTag,
      aggregates,
    });
    for (const candidate of candidates) {
      const claim = await this.claims.claim(candidate.host, incidentId);
      if (claim.kind === 'taken') continue;
      if (claim.kind === 'already-held')
        return (await this.enable(claim.host, incidentId, log)) ? claim.host : null;
      const fresh = await findComputeService(this.compute, candidate.host, candidate.id);
      if (!this.isPooled(fresh)) {
        await this.claims.release(candidate.host, incidentId);
        continue;
      }
      if (await this.enable(candidate.host, incidentId, log)) return candidate.host;
      return null;
    }
    log.info(
      { pool: pool.map((spare) => spare.host) },
      `RESERVED_HOSTS: no reserved host matches ${failed.host} by ${this.config.taggedAggregates ? 'aggregate' : 'availability zone'}`,
    );
    return null;
  }

  private async enable(spare: string, incidentId: string, log: Logger): Promise<boolean> {
    const service = await findComputeService(this.compute, spare, null);
    if (service === null) {
      await this.claims.release(spare, incidentId);
      return false;
    }
    if (!service.status.includes('disabled')) return true;
    try {
      await enableService(this.compute, service.id);
      log.info({ reservedHost: spare }, `Enabled reserved host ${spare}`);
      return true;
    } catch (error) {
      log.warn(
        { err: error, reservedHost: spare },
        `could not enable reserved host ${spare}; it stays in the pool`,
      );
      await this.claims.release(spare, incidentId);
      return false;
    }
  }

  /**
   * Claims the first of a Masakari segment's usable reserved hosts (`candidates`, in order; see
   * segmentPlacement) that no other incident holds, or returns the one this incident already holds;
   * each is re-read from Nova after its claim and must still be usable (`unusable` says why not),
   * then enabled when `enable` and disabled. Null when none could be taken (the claims released).
   * @returns the host and whether this call enabled its compute service
   */
  async acquireFrom(
    candidates: ReadonlyArray<ComputeService>,
    incidentId: string,
    options: { enable: boolean; unusable: (service: ComputeService | null) => string | null },
  ): Promise<{ host: string; enabled: boolean } | null> {
    const log = this.logger.child({ incidentId });
    for (const candidate of candidates) {
      const claim = await this.claims.claim(candidate.host, incidentId);
      if (claim.kind === 'taken') {
        log.info(
          { reservedHost: candidate.host, heldBy: claim.by },
          `Reserved host ${candidate.host} is held by incident ${claim.by}`,
        );
        continue;
      }
      const fresh = await findComputeService(this.compute, claim.host, null);
      const why = options.unusable(fresh);
      if (why !== null) {
        log.info({ reservedHost: claim.host }, `Reserved host ${claim.host} cannot take servers now: ${why}`);
        await this.claims.release(claim.host, incidentId);
        continue;
      }
      if (!options.enable || !fresh!.status.includes('disabled')) return { host: claim.host, enabled: false };
      if (await this.enable(claim.host, incidentId, log)) return { host: claim.host, enabled: true };
    }
    return null;
  }

  /**
   * Puts a reserved host this incident holds into service for a request that names it (a segment's
   * auto_priority holds one at planning and enables it only once the scheduler could not place a
   * server): re-read from Nova, still usable, enabled when disabled.
   * @returns `enabled` (by this call), `in-service` (already enabled), or null (not held by the
   *   incident, or it cannot take servers now)
   */
  async putIntoService(
    spare: string,
    incidentId: string,
    unusable: (service: ComputeService | null) => string | null,
  ): Promise<'enabled' | 'in-service' | null> {
    const log = this.logger.child({ incidentId, reservedHost: spare });
    if ((await this.claims.heldBy(incidentId)) !== spare) return null;
    const service = await findComputeService(this.compute, spare, null);
    const why = unusable(service);
    if (why !== null) {
      log.warn(`Reserved host ${spare} cannot take servers now: ${why}`);
      return null;
    }
    if (!service!.status.includes('disabled')) return 'in-service';
    return (await this.enable(spare, incidentId, log)) ? 'enabled' : null;
  }

  /**
   * After a failed evacuation: a spare nothing landed on is disabled again with `lifeguard-reserved:`
   * (back in the pool); one with servers on it, or whose servers cannot be listed, stays enabled.
   */
  async returnToPool(spare: string, incidentId: string): Promise<'returned' | 'kept'> {
    const log = this.logger.child({ reservedHost: spare, incidentId });
    try {
      const servers = await this.compute.listServers({ host: spare, allTenants: true });
      if (servers.length > 0) {
        log.info(
          { servers: servers.length },
          `Reserved host ${spare} keeps ${servers.length} instances; it stays enabled`,
        );
        return 'kept';
      }
      const service = await findComputeService(this.compute, spare, null);
      if (service === null) return 'kept';
      await markService(this.compute, service.id, formatDisabledReason({ kind: 'reserved' }));
      log.info(`Returned reserved host ${spare} to the pool`);
      return 'returned';
    } catch (error) {
      log.warn({ err: error }, `could not return reserved host ${spare} to the pool; it stays enabled`);
      return 'kept';
    } finally {
      await this.claims.release(spare, incidentId);
    }
  }

  /** The spare stays enabled for good (the evacuation succeeded): the claim is no longer needed. */
  release(spare: string, incidentId: string): Promise<void> {
    return this.claims.release(spare, incidentId);
  }
}
