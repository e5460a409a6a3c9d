import { type EventSink, transitionEventId } from '@lifeguard/contracts';
import {
  type AdmissionSnapshot,
  type Categorisation,
  COMPUTE_PROCESS,
  formatDisabledReason,
  type HostAgentFailures,
  hostAgentFailures,
  type InstanceHaConfig,
  type ProcessFailureAction,
  processFailureActions,
  type ServiceView,
} from '@lifeguard/instance-ha';
import { type ComputeApi, withRequestSignal } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';
import { Gauge, type Registry } from 'prom-client';
import { type EarlyPoll, STALE_MARGIN_MILLISECONDS } from '../next-poll.ts';

/** What the poll cycle gets back: its categorisation with the host agent channel's failures added. */
export interface HostAgentDetectionResult {
  readonly categorisation: Categorisation;
  /** The silence rule's words for each host it failed (carried in `host.down`'s evidence). */
  readonly reasons: ReadonlyMap<string, string>;
  /** A poll to run when a host now awaiting Nova's overdue report can be failed, or null. */
  readonly earlyPoll: EarlyPoll | null;
}

export interface HostAgentDetectionOptions {
  readonly config: Pick<
    InstanceHaConfig,
    'heartbeatDetection' | 'heartbeatDownAfterSeconds' | 'novaReportIntervalSeconds'
  >;
  /** Nova, to disable and enable a compute service whose nova-compute stopped and runs again. */
  readonly compute: Pick<ComputeApi, 'updateService'>;
  readonly events: EventSink;
  readonly logger: Logger;
  readonly registry: Registry;
}

type AdmissionInputs = Pick<AdmissionSnapshot, 'heartbeats'>;

/** A poll cycle without HEARTBEAT_DETECTION's channel: the categorisation as it is, nothing done. */
export const NO_HOST_AGENT_DETECTION: Pick<HostAgentDetection, 'apply' | 'respond'> = {
  apply: async (categorisation) => ({ categorisation, reasons: new Map(), earlyPoll: null }),
  respond: async () => [],
};

/**
 * HEARTBEAT_DETECTION in the poll cycle (docs/host-agent.md#detection-on-heartbeats): adds the hosts
 * the host agent channel failed (hostAgentFailures) to the cycle's fresh failures, so that every
 * admission gate judges them as it judges Nova's (the channel's cliff among them). A host whose agent
 * is silent while nova-compute reports is named by `lifeguard_host_agent_silent{host}` (alert
 * LifeguardHostAgentSilent) and one `host.agent.silent` event per silence. A live host whose
 * nova-compute stopped has its compute service disabled, and enabled again (`respond`).
 */
export class HostAgentDetection {
  private readonly agentSilentGauge: Gauge<'host'>;
  /** Hosts whose agent silence was announced, with the last heartbeat it was announced for. */
  private announced = new Map<string, string>();
  /** Per host, the Nova call `respond` started and that has not ended. */
  private readonly calling = new Map<string, Promise<void>>();
  /** Per host, the marker time of the `process-stopped` disabling this replica announced. */
  private readonly disabledAnnounced = new Map<string, string>();
  /** Per host, the report time of an enabling lifeguard asked Nova for and has not announced. */
  private readonly enabling = new Map<string, string>();

  constructor(private readonly options: HostAgentDetectionOptions) {
    this.agentSilentGauge = new Gauge({
      name: 'lifeguard_host_agent_silent',
      help: "1 while a host's agent is silent on every network but its nova-compute reports (HEARTBEAT_DETECTION)",
      labelNames: ['host'],
      registers: [options.registry],
    });
  }

  /**
   * The cycle's categorisation with the host agent channel's failures added; unchanged without
   * HEARTBEAT_DETECTION or the agents' reports.
   */
  async apply(
    categorisation: Categorisation,
    inputs: { readonly heartbeats: AdmissionInputs['heartbeats']; readonly now: Date },
  ): Promise<HostAgentDetectionResult> {
    const { config } = this.options;
    const evidence = inputs.heartbeats?.hostAgents ?? null;
    if (!config.heartbeatDetection || evidence === null)
      return { categorisation, reasons: new Map(), earlyPoll: null };
    const found = hostAgentFailures(
      {
        services: categorisation.services,
        alreadyFailed: new Set(categorisation.freshFailures.map((failure) => failure.service.host)),
        evidence,
        listeningSince: inputs.heartbeats?.listeningSince ?? null,
        now: inputs.now,
      },
      {
        downAfterSeconds: config.heartbeatDownAfterSeconds,
        novaReportIntervalSeconds: config.novaReportIntervalSeconds,
      },
    );
    await this.report(found);
    const next = found.nextDecision;
    const early = next
      ? { at: new Date(next.at.getTime() + STALE_MARGIN_MILLISECONDS), host: next.host }
      : null;
    return {
      categorisation: {
        ...categorisation,
        freshFailures: [...categorisation.freshFailures, ...found.failures],
      },
      reasons: found.reasons,
      earlyPoll: early,
    };
  }

  /**
   * Masakari's process-failure behaviour (processFailureActions): disables the compute service of a
   * live host whose agent reports nova-compute stopped, with lifeguard's `process-stopped` marker, and
   * enables it again when nova-compute runs; an event and a log line each.
   *
   * The Nova call runs beside the poll, not in it: Nova saves the service's new status and then asks
   * the host's nova-compute to update its COMPUTE_STATUS_DISABLED trait, a call that waits out
   * `rpc_response_timeout` when nova-compute has just stopped and Nova still counts it up; a poll must
   * not wait for that. One call per host at a time. The events are judged from Nova's listing as well
   * as from the call's answer, so a change Nova saved is announced even while its call waits, when it
   * timed out, or when its event could not be published at first (each once per replica): a service
   * under lifeguard's `process-stopped` marker not yet announced is announced (the marker's time
   * gives the event its id), and one lifeguard enabled again, once the listing shows it enabled.
   */
  async respond(
    services: ReadonlyArray<ServiceView>,
    inputs: { readonly heartbeats: AdmissionInputs['heartbeats']; readonly now: Date },
  ): Promise<ProcessFailureAction[]> {
    const evidence = inputs.heartbeats?.hostAgents ?? null;
    if (!this.options.config.heartbeatDetection || evidence === null) return [];
    const actions = processFailureActions(
      services,
      evidence,
      inputs.now,
      this.options.config.heartbeatDownAfterSeconds,
    ).filter((action) => !this.calling.has(action.host));
    for (const action of actions) this.call(action);
    await this.announceFromListing(services);
    return actions;
  }

  /** Resolves once no Nova call started by `respond` is running. */
  async settled(): Promise<void> {
    while (this.calling.size > 0) await Promise.allSettled([...this.calling.values()]);
  }

  /** Starts `action`'s Nova call, bounded by the client's own timeout rather than the poll's deadline. */
  private call(action: ProcessFailureAction): void {
    const running = withRequestSignal(new AbortController().signal, () => this.act(action)).finally(() => {
      this.calling.delete(action.host);
    });
    this.calling.set(action.host, running);
  }

  private async act(action: ProcessFailureAction): Promise<void> {
    const { compute, logger } = this.options;
    const { host, serviceId } = action;
    const reportedAt = action.reportedAt.toISOString();
    try {
      if (action.action === 'disable') {
        const disabledReason = formatDisabledReason({ kind: 'process-stopped', at: action.reportedAt });
        await compute.updateService(serviceId, { status: 'disabled', disabled_reason: disabledReason });
        logger.warn(
          { host, process: COMPUTE_PROCESS, disabledReason },
          `${COMPUTE_PROCESS} stopped on ${host}, whose agent is heard: compute service disabled (no new servers there), nothing fenced`,
        );
        await this.announceDisabled(host, disabledReason, reportedAt);
      } else {
        this.enabling.set(host, reportedAt);
        await compute.updateService(serviceId, { status: 'enabled' });
        logger.info(
          { host, process: COMPUTE_PROCESS },
          `${COMPUTE_PROCESS} runs again on ${host}: compute service enabled`,
        );
        await this.announceEnabled(host, reportedAt);
      }
    } catch (error) {
      logger.warn(
        { err: error, host, action: action.action },
        `compute service of ${host} not ${action.action}d, as far as lifeguard knows (Nova may have saved it before asking nova-compute to update its traits): the next poll reads what Nova holds and announces or tries again`,
      );
    }
  }

  /** Announces what Nova's listing shows lifeguard changed and no event of this replica said yet. */
  private async announceFromListing(services: ReadonlyArray<ServiceView>): Promise<void> {
    for (const service of services) {
      const host = service.host;
      const { marker } = service;
      if (
        service.status === 'disabled' &&
        marker.kind === 'process-stopped' &&
        marker.origin === 'lifeguard' &&
        marker.timestamp !== null &&
        this.disabledAnnounced.get(host) !== marker.timestamp
      ) {
        await this.announceDisabled(host, service.disabledReason ?? '', marker.timestamp);
      }
      const enabledAt = this.enabling.get(host);
      if (service.status === 'enabled' && enabledAt !== undefined) {
        await this.announceEnabled(host, enabledAt);
      }
    }
  }

  private async announceDisabled(host: string, disabledReason: string, reportedAt: string): Promise<void> {
    const type = 'host.compute-service.disabled';
    if (this.disabledAnnounced.get(host) === reportedAt) return;
    try {
      await this.options.events.publish(
        type,
        { host, process: COMPUTE_PROCESS, disabledReason, reportedAt },
        { id: transitionEventId(type, host, reportedAt) },
      );
      this.disabledAnnounced.set(host, reportedAt);
    } catch (error) {
      this.options.logger.warn(
        { err: error, host, type },
        `${type} for ${host} not published; trying again at the next poll`,
      );
    }
  }

  private async announceEnabled(host: string, reportedAt: string): Promise<void> {
    const type = 'host.compute-service.enabled';
    if (this.enabling.get(host) !== reportedAt) return;
    try {
      await this.options.events.publish(
        type,
        { host, process: COMPUTE_PROCESS, reportedAt },
        { id: transitionEventId(type, host, reportedAt) },
      );
      this.enabling.delete(host);
      this.disabledAnnounced.delete(host);
    } catch (error) {
      this.options.logger.warn(
        { err: error, host, type },
        `${type} for ${host} not published; trying again at the next poll`,
      );
    }
  }

  private async report(found: HostAgentFailures): Promise<void> {
    const { events, logger } = this.options;
    for (const failure of found.failures) {
      const host = failure.service.host;
      logger.warn(
        { host, reason: found.reasons.get(host) },
        `${host} failed on heartbeats, without waiting for DELTA: ${found.reasons.get(host)}`,
      );
    }
    this.agentSilentGauge.reset();
    const announced = new Map<string, string>();
    for (const { host, lastHeartbeat, reason } of found.agentSilent) {
      this.agentSilentGauge.set({ host }, 1);
      const lastHeartbeatAt = lastHeartbeat.toISOString();
      if (this.announced.get(host) === lastHeartbeatAt) {
        announced.set(host, lastHeartbeatAt);
        continue;
      }
      try {
        await events.publish(
          'host.agent.silent',
          { host, lastHeartbeatAt, reason },
          { id: transitionEventId('host.agent.silent', host, lastHeartbeatAt) },
        );
        announced.set(host, lastHeartbeatAt);
        logger.warn(
          { host, lastHeartbeatAt, reason },
          `host agent of ${host} silent, the host runs: ${reason}`,
        );
      } catch (error) {
        logger.warn({ err: error, host }, 'host.agent.silent not published; trying again at the next poll');
      }
    }
    this.announced = announced;
  }
}
