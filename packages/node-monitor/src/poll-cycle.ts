import { transitionEventId } from '@lifeguard/contracts';
import {
  type AdmissionDecision,
  type AdmissionSummaryStore,
  type AdmittedHost,
  type HeartbeatCliffState,
  INITIAL_HEARTBEAT_CLIFF,
  type Incident,
  type IncidentStore,
  type InstanceHaConfig,
  leftDisabled,
  type MassEventHoldStore,
  needsAnnouncement,
  type ServiceView,
} from '@lifeguard/instance-ha';
import { type ComputeApi, withRequestSignal } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';
import { keepAdmissionSummary } from './admission/keep-admission-summary.ts';
import { type AdmissionDependencies, type AdmissionInputs, runAdmission } from './admission/run-admission.ts';
import { CycleCategoriser } from './cycle-categoriser.ts';
import type { EventSink } from './event-sink.ts';
import { type HostAgentDetection, NO_HOST_AGENT_DETECTION } from './heartbeat/host-agent-detection.ts';
import { evidenceOf } from './host-down-evidence.ts';
import { settleKdumpClocks } from './kdump-clock-settling.ts';
import { MassEventHoldMemory } from './mass-event-hold-memory.ts';
import type { RedisMemoryWatch } from './memory/redis-memory-watch.ts';
import type { NodeMonitorMetrics } from './metrics.ts';
import {
  NO_MONITOR_REPORTS,
  type MonitorReportDetection as Reports,
} from './monitor-reports/monitor-report-detection.ts';
import { type EarlyPoll, earlierPoll, earlyPoll, logCycleCompleted } from './next-poll.ts';
import { NotLeaderError } from './not-leader-error.ts';

/** The leader lease as the cycle needs it: the current fencing token, or null when not leading. */
export interface Leadership {
  readonly token: number | null;
}

export interface PollCycleDependencies extends Omit<AdmissionDependencies, 'logger'> {
  /**
   * Last heartbeat per short host and the listener's start, when CHECK_HEARTBEAT is on; with
   * HEARTBEAT_DETECTION also what the host agents said.
   */
  readonly heartbeats: (() => Promise<NonNullable<AdmissionInputs['heartbeats']>>) | null;
  /**
   * HEARTBEAT_DETECTION: adds the hosts the host agent channel failed to the cycle's failures, and
   * disables (enables) the compute service of a live host whose nova-compute stopped (runs again).
   */
  readonly hostAgentDetection?: Pick<HostAgentDetection, 'apply' | 'respond'>;
  /** Host monitors' reports (a Masakari COMPUTE_HOST STOPPED), judged as detection signals. */
  readonly monitorReports?: Pick<Reports, 'apply' | 'admitting' | 'judged'>;
  readonly incidents: IncidentStore;
  readonly events: EventSink;
  readonly leadership: Leadership;
  readonly metrics: NodeMonitorMetrics;
  readonly logger: Logger;
  readonly now?: () => Date;
  /** Where the cycle's admission summary is kept for the operator tools (`lifeguard status`, the console). */
  readonly admissionSummaries?: Pick<AdmissionSummaryStore, 'write'>;
  /** Where the mass-event holds are kept for the next leader (absent: in this process only). */
  readonly massEventHolds?: Pick<MassEventHoldStore, 'read' | 'write'>;
  /** Notices a Redis that lost its memory and rebuilds incidents from Nova (before anything is read from Redis). */
  readonly memory?: Pick<RedisMemoryWatch, 'check'>;
}

/** One published `host.down`. */
export interface PublishedHostDown {
  readonly host: string;
  readonly incidentId: string;
  readonly resume: boolean;
  readonly kdumpFenced: boolean;
  readonly created: boolean;
}

export interface CycleReport {
  readonly services: number;
  readonly stale: number;
  readonly skipped: number;
  readonly decision: AdmissionDecision;
  readonly published: ReadonlyArray<PublishedHostDown>;
  readonly recoveryRequested: ReadonlyArray<string>;
  readonly durationSeconds: number;
  /** Leadership was lost during the cycle: the rest was not published. */
  readonly leadershipLost: boolean;
  /** A poll to run before POLL seconds have passed (a silent service crossing DELTA), or null. */
  readonly earlyPoll: EarlyPoll | null;
}

/** Thrown when the leader lease is not held at the start of a cycle. */

/**
 * One poll cycle (docs/instance-ha-rules.md#poll): list `nova-compute` services, categorise them (#service-categorisation),
 * run the admission gates (#admission-gates), publish `host.down` for every admitted host (one incident per
 * failure, opened atomically in Redis; the leader's fencing token on every event), the gate outcomes
 * (`threshold.exceeded`, `admission.blocked`) and `host.recovery.requested` for re-enable candidates
 * (every cycle, even when DISABLED or blocked, as InstanceHA's re-enable step). A Redis that lost its
 * memory is noticed and rebuilt from Nova first (RedisMemoryWatch). Nothing is published
 * once the leader lease is lost. Records Nova could not fully describe are skipped and logged.
 * @throws NotLeaderError when not leading; the Nova listing's error when the poll fails
 */
export class PollCycle {
  private readonly categoriser: CycleCategoriser;
  /** The heartbeat cliff state the last cycle left (this monitor's; a new monitor starts afresh). */
  private heartbeatCliff: HeartbeatCliffState = INITIAL_HEARTBEAT_CLIFF;
  private readonly holds: MassEventHoldMemory;

  constructor(private readonly dependencies: PollCycleDependencies) {
    this.categoriser = new CycleCategoriser(dependencies);
    this.holds = new MassEventHoldMemory(dependencies.massEventHolds, dependencies.logger);
  }

  private get config(): InstanceHaConfig {
    return this.dependencies.config;
  }

  /**
   * Runs the cycle with every OpenStack call bounded by `deadline`: once it aborts, the calls in
   * flight are cancelled and the cycle rejects with its reason before deciding or publishing.
   */
  run(deadline: AbortSignal = new AbortController().signal): Promise<CycleReport> {
    return withRequestSignal(deadline, () => this.runBounded(deadline));
  }

  private async runBounded(deadline: AbortSignal): Promise<CycleReport> {
    const { compute, incidents, logger, metrics, leadership } = this.dependencies;
    const token = leadership.token;
    if (token === null) throw new NotLeaderError();
    const started = performance.now();
    const services = await (compute as ComputeApi).listServices({ binary: 'nova-compute' });
    const now = this.dependencies.now?.() ?? new Date();
    await this.dependencies.memory?.check(services, now, token);
    // Phase one of the admission snapshot, read together: the open incidents and the heartbeats.
    const [open, heartbeats] = await Promise.all([incidents.openByShortHost(), this.readHeartbeats()]);
    metrics.hostsProcessing.set(open.size);
    const categorised = this.categoriser.categorise(services, open, now);
    const hostAgents = this.dependencies.hostAgentDetection ?? NO_HOST_AGENT_DETECTION;
    const detected = await hostAgents.apply(categorised, { heartbeats, now });
    const reports = this.dependencies.monitorReports ?? NO_MONITOR_REPORTS;
    const reported = await reports.apply(detected.categorisation, { open, now });
    const { categorisation, earlyPoll: reportPoll } = reported;
    if (this.config.checkKdump) await settleKdumpClocks(categorisation.services, open, this.dependencies);
    const stillLeading = () => leadership.token === token;
    const published: PublishedHostDown[] = [];
    let leadershipLost = false;
    // The chain runs every cycle (cheap without candidates) so the heartbeat cliff baseline stays current.
    const decision = await this.admit({
      categorisation,
      openIncidents: open,
      now,
      fencingToken: token,
      heartbeats,
    });
    // What was read is acted on only while it is fresh: a poll past its deadline decides nothing.
    deadline.throwIfAborted();
    if (!stillLeading()) leadershipLost = true;
    else {
      await this.publishOutcomes(decision, token);
      await Promise.all([
        keepAdmissionSummary(this.dependencies, this.config.pollSeconds, decision, now),
        reports.admitting(decision),
      ]);
      leadershipLost = await this.publishAdmitted(decision, token, {
        now,
        stillLeading,
        reasons: detected.reasons,
        published,
      });
      if (!leadershipLost) await reports.judged(decision, published, now);
      if (!leadershipLost) await hostAgents.respond(categorisation.services, { heartbeats, now });
    }
    const recoveryRequested = leadershipLost
      ? []
      : await this.requestRecoveries(categorisation.reenableCandidates, open, token, stillLeading);
    const durationSeconds = (performance.now() - started) / 1000;
    metrics.pollDurationSeconds.observe(durationSeconds);
    const stale = categorisation.freshFailures.length;
    const early = earlierPoll(
      earlyPoll(categorisation.services, {
        deltaSeconds: this.config.deltaSeconds,
        suspectAgeSeconds: this.config.thresholdSuspectAgeSeconds,
      }),
      earlierPoll(detected.earlyPoll, reportPoll),
    );
    logCycleCompleted(logger, {
      services: categorisation.services.length,
      stale,
      durationSeconds,
      published: published.length,
      pollSeconds: this.config.pollSeconds,
      early,
    });
    return {
      services: categorisation.services.length,
      stale,
      skipped: categorisation.skipped.length,
      decision,
      published,
      recoveryRequested,
      durationSeconds,
      leadershipLost,
      earlyPoll: early,
    };
  }

  /** Publishes `host.down` for each admitted host while leading. @returns true when the lease was lost */
  private async publishAdmitted(
    decision: AdmissionDecision,
    token: number,
    moment: {
      now: Date;
      stillLeading: () => boolean;
      reasons: ReadonlyMap<string, string>;
      published: PublishedHostDown[];
    },
  ): Promise<boolean> {
    for (const host of decision.admitted) {
      if (!moment.stillLeading()) return true;
      const done = await this.publishHostDown(host, token, moment);
      if (done === 'leadership-lost') return true;
      if (done) moment.published.push(done);
    }
    return false;
  }

  /** With CHECK_HEARTBEAT and a running listener, the last heartbeats and the listener's start; else null. */
  private async readHeartbeats(): Promise<AdmissionInputs['heartbeats']> {
    const { heartbeats } = this.dependencies;
    return this.config.checkHeartbeat && heartbeats ? heartbeats() : null;
  }

  /** The cycle's admission, from the cliff and hold states the last cycle left; keeps the next ones. */
  private async admit(
    inputs: Omit<AdmissionInputs, 'heartbeatCliff' | 'massEventHolds'>,
  ): Promise<AdmissionDecision> {
    const massEventHolds = await this.holds.current(this.dependencies.leadership.token);
    const decision = await runAdmission(
      { ...inputs, heartbeatCliff: this.heartbeatCliff, massEventHolds },
      this.dependencies,
    );
    this.heartbeatCliff = decision.heartbeatCliff;
    await this.holds.keep(decision.massEventHolds, this.config);
    return decision;
  }

  private async publishOutcomes(decision: AdmissionDecision, token: number): Promise<void> {
    const { events, logger, metrics } = this.dependencies;
    const allStale = decision.blocked.some((block) => block.gate === 'all-services-stale');
    metrics.allServicesStaleNow.set(allStale ? 1 : 0);
    for (const data of decision.thresholdExceeded) {
      if (data.scope === 'global') metrics.thresholdExceeded.inc();
      else metrics.aggregateThresholdExceeded.inc({ aggregate: data.aggregate ?? '' });
      await events
        .publish('threshold.exceeded', data)
        .catch((error: unknown) => logger.error({ err: error }, 'threshold.exceeded not published'));
    }
    for (const block of decision.blocked) {
      metrics.admissionBlocked.inc({ gate: block.gate }, block.hosts.length);
      if (block.gate === 'heartbeat-cliff') metrics.heartbeatCliff.inc();
      if (block.gate === 'rate-limit') metrics.fencingRateLimited.inc();
      if (block.gate === 'all-services-stale') metrics.allServicesStale.inc();
      if (block.gate === 'host-reachable')
        for (const host of block.hosts) metrics.hostReachable.inc({ host });
      await events
        .publish('admission.blocked', { gate: block.gate, hosts: [...block.hosts], reason: block.reason })
        .catch((error: unknown) =>
          logger.error(
            { err: error, gate: block.gate, fencingToken: token },
            'admission.blocked not published',
          ),
        );
    }
  }

  /**
   * Opens (or reuses) the host's incident and publishes `host.down` with `token`, unless the lease was
   * lost meanwhile (the Redis round trips of opening can outlast it on a slow link): then nothing is
   * published and the incident waits for the next leader, which announces it.
   */
  private async publishHostDown(
    host: AdmittedHost,
    token: number,
    moment: { now: Date; stillLeading: () => boolean; reasons: ReadonlyMap<string, string> },
  ): Promise<PublishedHostDown | 'leadership-lost' | null> {
    const { now, stillLeading } = moment;
    const evidence = evidenceOf(host.service, moment.reasons.get(host.service.host));
    const { incidents, events, logger, metrics } = this.dependencies;
    const { service } = host;
    let incident: Incident;
    let created = false;
    try {
      if (host.incident) incident = host.incident;
      else {
        const opened = await incidents.openIncident({
          host: service.host,
          serviceId: service.id,
          fencingToken: token,
          kdumpFenced: host.kdumpFenced,
          resume: host.resume,
          evidence,
          now,
        });
        incident = opened.incident;
        created = opened.created;
        if (!created && !needsAnnouncement(incident, token)) {
          logger.info(
            { host: service.host, incidentId: incident.id },
            'another monitor already published this failure',
          );
          return null;
        }
      }
      if (!stillLeading()) {
        logger.warn(
          { host: service.host, incidentId: incident.id, fencingToken: token },
          'leader lease lost while opening the incident: host.down left to the next leader',
        );
        return 'leadership-lost';
      }
      // One id per publication of the incident (its count): a monitor killed between this publish and
      // recordPublished publishes it again after its restart as the same event.
      await events.publish(
        'host.down',
        {
          host: service.host,
          incidentId: incident.id,
          fencingToken: token,
          evidence,
          kdumpFenced: host.kdumpFenced,
          resume: host.resume,
        },
        { id: transitionEventId('host.down', incident.id, String(incident.publishCount)) },
      );
      await incidents.recordPublished(incident.id, new Date(), token);
    } catch (error) {
      logger.error({ err: error, host: service.host }, 'host.down not published; retried next cycle');
      return null;
    }
    metrics.hostDown.inc({ host: service.host });
    logger.warn(
      {
        host: service.host,
        incidentId: incident.id,
        resume: host.resume,
        kdumpFenced: host.kdumpFenced,
        fencingToken: token,
      },
      `host.down published for ${service.host} (incident ${incident.id})`,
    );
    return {
      host: service.host,
      incidentId: incident.id,
      resume: host.resume,
      kdumpFenced: host.kdumpFenced,
      created,
    };
  }

  private async incidentExists(incidentId: string): Promise<boolean> {
    return (await this.dependencies.incidents.get(incidentId)) !== null;
  }

  private async requestRecoveries(
    candidates: ReadonlyArray<ServiceView>,
    open: ReadonlyMap<string, Incident>,
    token: number,
    stillLeading: () => boolean,
  ): Promise<string[]> {
    const { events, logger, metrics } = this.dependencies;
    const requested: string[] = [];
    for (const service of candidates) {
      const { leaveDisabled } = this.config;
      if (leftDisabled({ leaveDisabled, status: service.status, marker: service.marker })) continue;
      if (!stillLeading()) break;
      let incidentId = open.get(service.shortHost)?.id ?? service.marker.incidentId;
      try {
        // A marker naming an incident Redis no longer holds (its memory was lost): the request goes
        // without one, to the re-enable rules, instead of being dead-lettered every cycle.
        if (incidentId !== null && !open.has(service.shortHost) && !(await this.incidentExists(incidentId)))
          incidentId = null;
        await events.publish('host.recovery.requested', {
          host: service.host,
          serviceId: service.id,
          incidentId,
          fencingToken: token,
          status: service.status,
          state: service.state,
          forcedDown: service.forcedDown,
          disabledReason: service.disabledReason,
        });
        metrics.recoveryRequested.inc({ host: service.host });
        requested.push(service.host);
      } catch (error) {
        logger.error({ err: error, host: service.host }, 'host.recovery.requested not published');
      }
    }
    return requested;
  }
}
