import {
  type Categorisation,
  categoriseServices,
  type Incident,
  type InstanceHaConfig,
  type OpenIncidentSummary,
} from '@lifeguard/instance-ha';
import type { Logger } from '@lifeguard/runtime';
import type { NodeMonitorMetrics } from './metrics.ts';

/**
 * Categorises each cycle's `nova-compute` services against the open incidents (categoriseServices)
 * and logs what the categorisation found wrong: skipped records every cycle, lasting conditions once
 * per host (an unparsable `updated_at`, a host forced down outside lifeguard, an orphaned marker, a
 * FAILED evacuation).
 */
export class CycleCategoriser {
  private readonly reportedOnce = new Set<string>();

  constructor(
    private readonly dependencies: {
      readonly config: Pick<InstanceHaConfig, 'deltaSeconds'>;
      readonly logger: Logger;
      readonly metrics: Pick<NodeMonitorMetrics, 'servicesSkipped'>;
    },
  ) {}

  private get config() {
    return this.dependencies.config;
  }

  private once(key: string, log: () => void): void {
    if (this.reportedOnce.has(key)) return;
    this.reportedOnce.add(key);
    log();
  }

  /** The cycle's services categorised against the open incidents (and their problems logged). */
  categorise(
    services: Parameters<typeof categoriseServices>[0],
    open: ReadonlyMap<string, Incident>,
    now: Date,
  ): Categorisation {
    const summaries = new Map<string, OpenIncidentSummary>(
      [...open].map(([host, incident]) => [host, { id: incident.id, state: incident.state }]),
    );
    const categorisation = categoriseServices(services, {
      now,
      deltaSeconds: this.config.deltaSeconds,
      openIncidents: summaries,
    });
    this.logCategorisation(categorisation);
    return categorisation;
  }

  private logCategorisation(categorisation: ReturnType<typeof categoriseServices>): void {
    const { logger, metrics } = this.dependencies;
    for (const skipped of categorisation.skipped) {
      metrics.servicesSkipped.inc();
      logger.warn(
        { host: skipped.host, reason: skipped.reason },
        `compute service record skipped: ${skipped.reason}`,
      );
    }
    for (const service of categorisation.unparsableUpdatedAt) {
      this.once(`updated_at:${service.host}`, () =>
        logger.warn(
          { host: service.host, updatedAt: service.updatedAt },
          'updated_at missing or unparsable: never counted as stale',
        ),
      );
    }
    for (const service of categorisation.operatorForcedDown) {
      this.once(`forced:${service.host}`, () =>
        logger.warn(
          { host: service.host },
          'enabled host forced down outside lifeguard: left alone (not re-enabled)',
        ),
      );
    }
    for (const service of categorisation.orphanedLifeguardMarkers) {
      this.once(`orphan:${service.host}`, () =>
        logger.warn(
          { host: service.host, disabledReason: service.disabledReason },
          'host carries a lifeguard evacuation marker but has no open incident: left alone for an operator',
        ),
      );
    }
    for (const service of categorisation.failedEvacuations) {
      this.once(`failed:${service.host}:${service.disabledReason}`, () =>
        logger.warn(
          { host: service.host, disabledReason: service.disabledReason },
          'evacuation FAILED on this host: waiting for an operator',
        ),
      );
    }
    if (categorisation.freshFailures.length > 0) {
      const hosts = categorisation.freshFailures.map((failure) => failure.service.host);
      logger.warn({ hosts }, `The following computes are down: ${JSON.stringify(hosts)}`);
    }
  }
}
