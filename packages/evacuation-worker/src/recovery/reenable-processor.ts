import {
  type ReenableJobData,
  ReenableJobData as ReenableJobDataSchema,
  transitionEventId,
} from '@lifeguard/contracts';
import {
  type DisabledReasonMarker,
  enableService,
  formatDisabledReason,
  INSTANCE_HA_CONSTANTS,
  type Incident,
  type IncidentStore,
  type InstanceHaConfig,
  type KdumpStore,
  migrationsInProgress,
  migrationWindowMinutes,
  parseDisabledReason,
  parseNovaTimestamp,
  type ReenableWaits,
  waitingSeconds,
  waitToAnnounce,
} from '@lifeguard/instance-ha';
import {
  type ComputeApi,
  type ComputeService,
  findComputeService,
  markService,
  NovaApiError,
} from '@lifeguard/openstack';
import { parseJobData } from '@lifeguard/runtime';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { EventSink } from '../event-sink.ts';
import type { EvacuationMetrics } from '../metrics.ts';
import { reenableStep, supersedingIncident } from './reenable-rules.ts';

export interface ReenableDependencies {
  readonly compute: ComputeApi;
  readonly config: Pick<
    InstanceHaConfig,
    'leaveDisabled' | 'forceEnable' | 'evacuationTimeoutSeconds' | 'deltaSeconds'
  >;
  readonly incidents: IncidentStore;
  readonly kdump: KdumpStore;
  readonly events: EventSink;
  readonly metrics: EvacuationMetrics;
  readonly logger: Logger;
  /** Wait before looking again at a host that is not ready, in milliseconds (default POLL). */
  readonly recheckMilliseconds: number;
  /** Hosts whose `forced_down` Nova refuses to lift (what `lifeguard status` and the metric read). */
  readonly waits: ReenableWaits;
  /** LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS: refusals lasting this long are announced, in seconds. */
  readonly waitingAlertSeconds: number;
}

/** What a re-enable job concluded. */
export interface ReenableJobResult {
  readonly host: string;
  /** `superseded`: a newer incident of the host is open (it failed again); this job's is not acted on. */
  readonly outcome: 'reenabled' | 'left-disabled' | 'not-a-candidate' | 'gone' | 'superseded';
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
 *
 * A host found enabled and not forced down while its incident is still `evacuated` was re-enabled by
 * an earlier attempt that ended before it published `host.reenabled` and closed the incident (a
 * worker killed between the two): the attempt does both then, so the event is not lost and the
 * incident does not stay open.
 *
 * Every attempt reads the world again before acting: the service as Nova lists it now, and the host's
 * open incident — one newer than the job's (the host failed again) ends the job as `superseded`
 * without touching Nova or that incident. While Nova refuses `forced_down: false`, the refusal is
 * recorded (ReenableWaits); once it lasted `waitingAlertSeconds`, a warning and
 * `host.reenable.waiting` say once that the host waits for its nova-compute to restart. The record
 * is removed when the job ends.
 */
export class ReenableProcessor {
  constructor(private readonly deps: ReenableDependencies) {}

  readonly process = async (job: ReenableJob, token?: string): Promise<ReenableJobResult> => {
    const data = parseJobData(ReenableJobDataSchema, job, 'reenable job data', this.deps.logger);
    const log = this.deps.logger.child({ host: data.host, incidentId: data.incidentId });
    try {
      const result = await this.reenable(job, token, data, log);
      await this.deps.waits.clear(data.host);
      return result;
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
      const newer = supersedingIncident(data.incidentId, await deps.incidents.getOpenIncident(data.host));
      if (newer !== null) {
        return this.leftAlone(
          data.host,
          'superseded',
          `incident ${newer.id} is open: ${data.host} failed again after incident ${data.incidentId}`,
          log,
        );
      }
      const incident = await this.incidentOf(data.host, data.incidentId, marker.incidentId);
      const inProgress = deps.config.forceEnable ? 0 : await this.evacuationsInProgress(data.host, log);
      const step = reenableStep({
        service,
        marker,
        leaveDisabled: deps.config.leaveDisabled,
        forceEnable: deps.config.forceEnable,
        forcedDownByLifeguard: incident !== null && incident.fence !== null,
        migrationsInProgress: inProgress,
        lastKdumpPacketAt: marker.kdump ? await deps.kdump.lastPacketAt(data.host) : null,
        kdumpQuietSeconds: INSTANCE_HA_CONSTANTS.kdumpQuietPeriodSeconds,
        reportAgeSeconds: reportAgeSeconds(service.updated_at),
        deltaSeconds: deps.config.deltaSeconds,
        now: new Date(),
      });
      switch (step.kind) {
        case 'not-a-candidate':
        case 'left-disabled':
          return this.leftAlone(data.host, step.kind, step.reason, log);
        case 'reenabled':
          // Enabled and not forced down. When this incident's evacuation had completed, the re-enable
          // itself got this far before (a worker killed after the enable, or before the incident was
          // closed): finish it — host.reenabled published, the incident closed — rather than lose both.
          if (incident?.state === 'evacuated') return this.reenabled(data.host, service.id, incident, log);
          return { host: data.host, outcome: 'reenabled', reason: null };
        case 'wait':
          return this.later(job, token, log, `Not re-enabling ${data.host} yet: ${step.reason}`, step.until);
        case 'unset-forced-down': {
          const unset = await this.unsetForcedDown({ job, token, data, service, marker, incident, log });
          if (unset === 'look-again') continue;
          return unset;
        }
        case 'enable':
          await enableService(deps.compute, service.id);
          return this.reenabled(data.host, service.id, incident, log);
      }
    }
    return this.later(job, token, log, `Re-enable of ${data.host} not finished; looking again later`, null);
  }

  /**
   * `PUT {"forced_down": false}`; on Nova's 400 the refusal is recorded and the job looks again later.
   * A kdump marker becomes the plain complete marker and the kdump packets are forgotten.
   * @returns the result when the host is re-enabled, or 'look-again' for the next step
   */
  private async unsetForcedDown(step: {
    job: ReenableJob;
    token: string | undefined;
    data: ReenableJobData;
    service: ComputeService;
    marker: DisabledReasonMarker;
    incident: Incident | null;
    log: Logger;
  }): Promise<ReenableJobResult | 'look-again'> {
    const { deps } = this;
    const { job, token, data, service, marker, incident, log } = step;
    try {
      await deps.compute.updateService(service.id, { forced_down: false });
    } catch (error) {
      if (!(error instanceof NovaApiError && error.status === 400)) throw error;
      await this.refused(data.host, service.id, incident?.id ?? data.incidentId, error.apiMessage, log);
      return this.later(
        job,
        token,
        log,
        `Could not unset force-down for ${data.host} (nova-req: ${error.requestId ?? 'none'}): ${error.apiMessage}. Will try again later`,
        null,
      );
    }
    log.info(`Unset forced_down of ${data.host}`);
    await deps.waits.clear(data.host);
    if (marker.kdump && service.status.includes('disabled')) {
      await markService(
        deps.compute,
        service.id,
        formatDisabledReason({ kind: 'complete', incidentId: incident?.id ?? marker.incidentId }),
      );
    }
    if (marker.kdump) await deps.kdump.clearPackets(data.host);
    if (service.status.includes('enabled')) return this.reenabled(data.host, service.id, incident, log);
    return 'look-again';
  }

  private leftAlone(
    host: string,
    outcome: 'not-a-candidate' | 'left-disabled' | 'superseded',
    reason: string,
    log: Logger,
  ): ReenableJobResult {
    this.deps.metrics.reenableChecks.inc({ outcome: 'left-alone' });
    log.info(`Not re-enabling ${host}: ${reason}`);
    return { host, outcome, reason };
  }

  /** How many evacuations from the host are still under way, or null when they could not be read. */
  private async evacuationsInProgress(host: string, log: Logger): Promise<number | null> {
    const { deps } = this;
    try {
      const minutes = migrationWindowMinutes(deps.config);
      const migrations = await deps.compute.listMigrations({
        sourceCompute: host,
        migrationType: 'evacuation',
        changesSince: new Date(Date.now() - minutes * 60_000).toISOString(),
        limit: 1000,
      });
      return migrationsInProgress(migrations.filter((migration) => migration.source_compute === host));
    } catch (error) {
      log.warn({ err: error }, `could not read the evacuation migrations of ${host}`);
      return null;
    }
  }

  /**
   * Records Nova's refusal to lift `forced_down`; once the refusals lasted `waitingAlertSeconds`,
   * says so once: a warning and `host.reenable.waiting`.
   */
  private async refused(
    host: string,
    serviceId: string,
    incidentId: string | null,
    reason: string,
    log: Logger,
  ): Promise<void> {
    const { deps } = this;
    const now = new Date();
    const wait = await deps.waits.refused({ host, serviceId, incidentId, reason }, now);
    if (!waitToAnnounce(wait, now, deps.waitingAlertSeconds)) return;
    const seconds = Math.round(waitingSeconds(wait, now));
    log.warn(
      { since: wait.since, waitingSeconds: seconds, reason },
      `${host} is waiting for its nova-compute to restart: Nova has refused to lift forced_down for ${seconds} s (${reason}); start nova-compute on ${host} (it marks its evacuations completed), lifeguard keeps trying`,
    );
    await deps.events.publish('host.reenable.waiting', {
      host,
      serviceId,
      incidentId,
      since: wait.since,
      waitingSeconds: seconds,
      reason,
    });
    await deps.waits.announced(wait, now);
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
    // One id per incident: an attempt that died before closing the incident publishes it again (the
    // `reenabled` step) as the same event.
    await deps.events.publish(
      'host.reenabled',
      { host, serviceId, incidentId: incident?.id ?? null },
      incident === null ? {} : { id: transitionEventId('host.reenabled', incident.id) },
    );
    if (incident !== null) await deps.incidents.close(incident.id, 'reenabled');
    deps.metrics.reenabled.inc();
    deps.metrics.reenableChecks.inc({ outcome: 'reenabled' });
    log.info(`Re-enabled ${host}`);
    return { host, outcome: 'reenabled', reason: null };
  }
}

/** Seconds since a service's `updated_at` (Nova's naive UTC), or null when it has none. */
function reportAgeSeconds(updatedAt: string | null | undefined, now: Date = new Date()): number | null {
  const at = parseNovaTimestamp(updatedAt);
  return at === null ? null : Math.max(0, (now.getTime() - at.getTime()) / 1000);
}
