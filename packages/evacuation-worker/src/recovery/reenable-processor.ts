import { type ReenableJobData, ReenableJobData as ReenableJobDataSchema } from '@lifeguard/contracts';
import {
  formatDisabledReason,
  INSTANCE_HA_CONSTANTS,
  type Incident,
  type IncidentStore,
  type InstanceHaConfig,
  type KdumpStore,
  migrationWindowMinutes,
  parseDisabledReason,
} from '@lifeguard/instance-ha';
import { type ComputeApi, NovaApiError } from '@lifeguard/openstack';
import { parseJobData } from '@lifeguard/runtime';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import { enableService, findComputeService, markService } from '../host/compute-service.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import { migrationsInProgress, reenableStep } from './reenable-rules.ts';

export interface ReenableDependencies {
  readonly compute: ComputeApi;
  readonly config: Pick<InstanceHaConfig, 'leaveDisabled' | 'forceEnable' | 'evacuationTimeoutSeconds'>;
  readonly incidents: IncidentStore;
  readonly kdump: KdumpStore;
  readonly events: EventSink;
  readonly metrics: EvacuationMetrics;
  readonly logger: Logger;
  /** Wait before looking again at a host that is not ready, in milliseconds (default POLL). */
  readonly recheckMilliseconds: number;
}

/** What a re-enable job concluded. */
export interface ReenableJobResult {
  readonly host: string;
  readonly outcome: 'reenabled' | 'left-disabled' | 'not-a-candidate' | 'gone';
  readonly reason: string | null;
}

type ReenableJob = Job<unknown, ReenableJobResult>;

/**
 * Processes `reenable` jobs (docs/instance-ha-rules.md#re-enable): reads the compute service afresh, applies
 * reenableStep, and acts — unsets `forced_down` (Nova's 400 while `done` evacuation records remain
 * is "not yet": the returning host must restart nova-compute first), rewrites a kdump marker to the
 * plain complete marker and forgets the kdump packets, enables the service once it reports `up`
 * (3 attempts), publishes `host.reenabled` and closes the incident. Whenever the host is not ready the
 * job moves itself to delayed and looks again after `recheckMilliseconds`, so one job per host
 * carries the host through (new requests for the host are de-duplicated meanwhile).
 */
export class ReenableProcessor {
  constructor(private readonly deps: ReenableDependencies) {}

  readonly process = async (job: ReenableJob, token?: string): Promise<ReenableJobResult> => {
    const data = parseJobData(ReenableJobDataSchema, job, 'reenable job data', this.deps.logger);
    const log = this.deps.logger.child({ host: data.host, incidentId: data.incidentId });
    try {
      return await this.reenable(job, token, data, log);
    } catch (error) {
      if (error instanceof DelayedError) throw error;
      // Nova or Redis unreachable: look again later rather than fail (a failed job would keep its id
      // and block the host's next request).
      log.warn({ err: error }, `re-enable check of ${data.host} failed`);
      return this.later(
        job,
        token,
        log,
        `Re-enable of ${data.host} interrupted by an error; looking again later`,
        null,
      );
    }
  };

  private async reenable(
    job: ReenableJob,
    token: string | undefined,
    data: ReenableJobData,
    log: Logger,
  ): Promise<ReenableJobResult> {
    const { deps } = this;
    for (let round = 0; round < 4; round++) {
      const service = await findComputeService(deps.compute, data.host, data.serviceId);
      if (service === null)
        return { host: data.host, outcome: 'gone', reason: 'Nova has no such compute service' };
      const marker = parseDisabledReason(service.disabled_reason);
      const incident = await this.incidentOf(data.host, data.incidentId, marker.incidentId);
      let inProgress: number | null = 0;
      if (!deps.config.forceEnable) {
        try {
          const minutes = migrationWindowMinutes(deps.config);
          const migrations = await deps.compute.listMigrations({
            sourceCompute: data.host,
            migrationType: 'evacuation',
            changesSince: new Date(Date.now() - minutes * 60_000).toISOString(),
            limit: 1000,
          });
          inProgress = migrationsInProgress(
            migrations.filter((migration) => migration.source_compute === data.host),
          );
        } catch (error) {
          log.warn({ err: error }, `could not read the evacuation migrations of ${data.host}`);
          inProgress = null;
        }
      }
      const step = reenableStep({
        service,
        marker,
        leaveDisabled: deps.config.leaveDisabled,
        forceEnable: deps.config.forceEnable,
        forcedDownByLifeguard: incident !== null && incident.fence !== null,
        migrationsInProgress: inProgress,
        lastKdumpPacketAt: marker.kdump ? await deps.kdump.lastPacketAt(data.host) : null,
        kdumpQuietSeconds: INSTANCE_HA_CONSTANTS.kdumpQuietPeriodSeconds,
        now: new Date(),
      });
      switch (step.kind) {
        case 'not-a-candidate':
        case 'left-disabled':
          deps.metrics.reenableChecks.inc({ outcome: 'left-alone' });
          log.info(`Not re-enabling ${data.host}: ${step.reason}`);
          return { host: data.host, outcome: step.kind, reason: step.reason };
        case 'reenabled':
          return { host: data.host, outcome: 'reenabled', reason: null };
        case 'wait':
          return this.later(job, token, log, `Not re-enabling ${data.host} yet: ${step.reason}`, step.until);
        case 'unset-forced-down': {
          try {
            await deps.compute.updateService(service.id, { forced_down: false });
          } catch (error) {
            if (error instanceof NovaApiError && error.status === 400) {
              return this.later(
                job,
                token,
                log,
                `Could not unset force-down for ${data.host} (nova-req: ${error.requestId ?? 'none'}): ${error.apiMessage}. Will try again later`,
                null,
              );
            }
            throw error;
          }
          log.info(`Unset forced_down of ${data.host}`);
          if (marker.kdump && service.status.includes('disabled')) {
            await markService(
              deps.compute,
              service.id,
              formatDisabledReason({ kind: 'complete', incidentId: incident?.id ?? marker.incidentId }),
            );
          }
          if (marker.kdump) await deps.kdump.clearPackets(data.host);
          if (service.status.includes('enabled')) return this.reenabled(data.host, service.id, incident, log);
          continue;
        }
        case 'enable':
          await enableService(deps.compute, service.id);
          return this.reenabled(data.host, service.id, incident, log);
      }
    }
    return this.later(job, token, log, `Re-enable of ${data.host} not finished; looking again later`, null);
  }

  private async incidentOf(
    host: string,
    incidentId: string | null,
    markerIncidentId: string | null,
  ): Promise<Incident | null> {
    const { incidents } = this.deps;
    for (const id of [incidentId, markerIncidentId]) {
      if (id === null) continue;
      const incident = await incidents.get(id);
      if (incident !== null && incident.state !== 'closed') return incident;
    }
    return incidents.getOpenIncident(host);
  }

  private async later(
    job: ReenableJob,
    token: string | undefined,
    log: Logger,
    message: string,
    until: Date | null,
  ): Promise<never> {
    this.deps.metrics.reenableChecks.inc({ outcome: 'waiting' });
    log.info(message);
    const at = until === null ? Date.now() + this.deps.recheckMilliseconds : until.getTime() + 100;
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }

  private async reenabled(
    host: string,
    serviceId: string,
    incident: Incident | null,
    log: Logger,
  ): Promise<ReenableJobResult> {
    const { deps } = this;
    await deps.events.publish('host.reenabled', { host, serviceId, incidentId: incident?.id ?? null });
    if (incident !== null) await deps.incidents.close(incident.id, 'reenabled');
    deps.metrics.reenabled.inc();
    deps.metrics.reenableChecks.inc({ outcome: 'reenabled' });
    log.info(`Re-enabled ${host}`);
    return { host, outcome: 'reenabled', reason: null };
  }
}
