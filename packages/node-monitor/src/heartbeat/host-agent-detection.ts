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
import type { ComputeApi } from '@lifeguard/openstack';
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
   * enables it again when nova-compute runs; an event and a log line each. A Nova call or an event
   * that fails is logged and tried again at the next poll (the action is judged again from Nova's
   * listing).
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
    );
    for (const action of actions) await this.act(action);
    return actions;
  }

  private async act(action: ProcessFailureAction): Promise<void> {
    const { compute, events, logger } = this.options;
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
        await events.publish(
          'host.compute-service.disabled',
          { host, process: COMPUTE_PROCESS, disabledReason, reportedAt },
          { id: transitionEventId('host.compute-service.disabled', host, reportedAt) },
        );
      } else {
        await compute.updateService(serviceId, { status: 'enabled' });
        logger.info(
          { host, process: COMPUTE_PROCESS },
          `${COMPUTE_PROCESS} runs again on ${host}: compute service enabled`,
        );
        await events.publish(
          'host.compute-service.enabled',
          { host, process: COMPUTE_PROCESS, reportedAt },
          { id: transitionEventId('host.compute-service.enabled', host, reportedAt) },
        );
      }
    } catch (error) {
      logger.error(
        { err: error, host, action: action.action },
        `compute service of ${host} not ${action.action}d (or its event not published); tried again at the next poll`,
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
