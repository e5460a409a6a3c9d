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
