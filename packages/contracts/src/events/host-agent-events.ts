import { z } from 'zod';
import { REPORT_NAME } from '../heartbeat/hbv2-packet.ts';
import { eventBase as base } from './event-base.ts';
import { HostName, Timestamp } from './identifiers.ts';

/** A network or process name as a host agent reports it. */
const ReportName = z.string().regex(REPORT_NAME);

/**
 * A live host's agent went silent on one network (not heard for HEARTBEAT_DOWN_AFTER seconds) while
 * it is heard on another (docs/host-agent.md#what-the-node-monitor-makes-of-it): a fault of that
 * host's link, not a failed host. Nothing is fenced. One event per silence: its id comes from the
 * host, the network and the last heartbeat heard on it.
 */
export const HostNetworkSilentEvent = z.object({
  ...base,
  type: z.literal('host.network.silent'),
  data: z.object({
    host: HostName,
    network: ReportName,
    /** The networks the agent is still heard on. */
    heardOn: z.array(ReportName).min(1),
    /** The last heartbeat heard on `network`, ISO 8601. */
    lastHeardAt: Timestamp,
  }),
});

/** A network a host's agent was silent on is heard again. */
export const HostNetworkHeardEvent = z.object({
  ...base,
  type: z.literal('host.network.heard'),
  data: z.object({ host: HostName, network: ReportName }),
});

/**
 * A live host's agent reports a watched process (nova-compute, libvirtd) stopped. The host and its
 * guests run; nothing is fenced.
 */
export const HostProcessStoppedEvent = z.object({
  ...base,
  type: z.literal('host.process.stopped'),
  data: z.object({
    host: HostName,
    process: ReportName,
    /** The report that first said so, ISO 8601. */
    reportedAt: Timestamp,
  }),
});

/** A process a host's agent reported stopped is reported running again. */
export const HostProcessRunningEvent = z.object({
  ...base,
  type: z.literal('host.process.running'),
  data: z.object({ host: HostName, process: ReportName }),
});

/**
 * A host's agent is silent on every network while its nova-compute reported after the agent's last
 * heartbeat (docs/host-agent.md#detection-on-heartbeats): the agent, or its path to every monitor, is
 * down, not the host. Nothing is fenced; the host agent channel cannot detect this host's failure
 * until its agent is heard again (Nova's DELTA still can). One event per silence: its id comes from
 * the host and the agent's last heartbeat.
 */
export const HostAgentSilentEvent = z.object({
  ...base,
  type: z.literal('host.agent.silent'),
  data: z.object({
    host: HostName,
    /** The agent's last heartbeat on any network, ISO 8601. */
    lastHeartbeatAt: Timestamp,
    /** The silence rule's words, e.g. `... but nova-compute reported 1.4 s after the last heartbeat ...`. */
    reason: z.string(),
  }),
});

/**
 * A live host's agent reported nova-compute stopped, and the node monitor disabled the host's compute
 * service with lifeguard's `process-stopped` marker (HEARTBEAT_DETECTION; Masakari's process-failure
 * behaviour): no new servers are scheduled there; the host and its guests run and nothing is fenced.
 */
export const HostComputeServiceDisabledEvent = z.object({
  ...base,
  type: z.literal('host.compute-service.disabled'),
  data: z.object({
    host: HostName,
    process: ReportName,
    /** The `disabled_reason` written. */
    disabledReason: z.string(),
    /** The agent's report that said the process stopped, ISO 8601. */
    reportedAt: Timestamp,
  }),
});

/** nova-compute runs again on a host lifeguard disabled for it: its compute service is enabled again. */
export const HostComputeServiceEnabledEvent = z.object({
  ...base,
  type: z.literal('host.compute-service.enabled'),
  data: z.object({
    host: HostName,
    process: ReportName,
    /** The agent's report that said the process runs, ISO 8601. */
    reportedAt: Timestamp,
  }),
});
