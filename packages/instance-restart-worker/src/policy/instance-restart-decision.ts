import type { InstanceFailure } from '@lifeguard/contracts';

/**
 * The (`event`, `vir_domain_event`) pairs Masakari's engine acts on for a `VM` notification
 * (masakari/engine/instance_events.py); every other pair is `ignored` there, and here.
 */
export const MASAKARI_INSTANCE_EVENTS: Readonly<Record<string, ReadonlyArray<string>>> = {
  LIFECYCLE: ['STOPPED_FAILED'],
  QEMU_GUEST_AGENT_ERROR: ['STOPPED_FAILED'],
  IO_ERROR: ['IO_ERROR_REPORT'],
};

/** oslo's `strutils.bool_from_string` true words, which Masakari applies to the HA_Enabled metadata value. */
export const OSLO_TRUE_STRINGS: ReadonlyArray<string> = ['1', 't', 'true', 'on', 'y', 'yes'];

/** Nova `vm_state`s Masakari leaves alone (`ignored`). */
const LEFT_ALONE_VM_STATES = ['paused', 'rescued'];
/** Nova `vm_state`s a restart can start from. */
const RESTARTABLE_VM_STATES = ['active', 'stopped', 'error', 'resized'];

/** The server as Nova shows it now (never an older reading). */
export interface ServerNow {
  readonly status: string;
  readonly vmState: string | null;
  readonly taskState: string | null;
  readonly host: string | null;
  readonly metadata: Readonly<Record<string, string>>;
}

/** The compute service of the server's host now, or null when Nova lists none. */
export interface ComputeServiceNow {
  readonly state: string;
  readonly forcedDown: boolean;
}

/** What the rule judges: the job's failure, and the world read now. */
export interface InstanceRestartFacts {
  readonly failure: InstanceFailure;
  /** The host the failure was reported from. */
  readonly reportedHost: string;
  readonly observedAt: Date;
  readonly now: Date;
  /** null: Nova answered 404 (the server is gone). */
  readonly server: ServerNow | null;
  readonly computeService: ComputeServiceNow | null;
  /** The id of an open lifeguard incident of the server's host, or null. */
  readonly openIncidentId: string | null;
  /** Where this job's own restart stands, from an earlier attempt of it; null when it never began. */
  readonly ownProgress: 'began' | 'start-sent' | null;
  /** When the instance's restarts by other jobs began (any age; the rule picks the last hour). */
  readonly otherRestartsBeganAt: ReadonlyArray<Date>;
}

export interface InstanceRestartSettings {
  /** Masakari `[instance_failure] process_all_instances`: restart instances without the metadata key too. */
  readonly processAllInstances: boolean;
  /** Masakari `[instance_failure] ha_enabled_instance_metadata_key` (default `HA_Enabled`). */
  readonly haEnabledMetadataKey: string;
  /** Masakari `[host_failure] ignore_instances_in_error_state`, applied to instance failures. */
  readonly ignoreInstancesInErrorState: boolean;
  /** Restarts of one instance that may begin within an hour; beyond it the rule gives up. */
  readonly maxRestartsPerHour: number;
}

/**
 * - `restart`: restart through Nova; `resetToActive` (vm_state error or resized) before the stop,
 *   `stop` unless Nova already shows the server stopped.
 * - `confirm`: this job's own start was sent and the server is ACTIVE: nothing more to do.
 * - `wait`: Nova has a task under way on the server; look again later (not a restart yet).
 * - `ignore`: not acted on; `masakariStatus` is what Masakari records in this case.
 * - `give-up`: too many restarts within the hour.
 */
export type InstanceRestartDecision =
  | {
      readonly action: 'restart';
      readonly resetToActive: boolean;
      readonly stop: boolean;
      readonly reason: string;
    }
  | { readonly action: 'confirm'; readonly reason: string }
  | { readonly action: 'wait'; readonly reason: string }
  | { readonly action: 'ignore'; readonly masakariStatus: 'ignored' | 'finished'; readonly reason: string }
  | { readonly action: 'give-up'; readonly restartsWithinHour: number; readonly reason: string };

const HOUR_MILLISECONDS = 3_600_000;
const short = (host: string) => host.split('.')[0] ?? host;
const ignore = (reason: string, masakariStatus: 'ignored' | 'finished' = 'ignored') =>
  ({ action: 'ignore', masakariStatus, reason }) as const;

/** Whether Masakari's engine acts on this (`event`, `vir_domain_event`) pair. */
export function isMasakariInstanceFailure(failure: InstanceFailure): boolean {
  const domainEvents = MASAKARI_INSTANCE_EVENTS[failure.event];
  return (
    domainEvents !== undefined &&
    failure.virDomainEvent !== null &&
    domainEvents.includes(failure.virDomainEvent)
  );
}

/** Whether the server's metadata asks for HA as Masakari reads it (oslo's true words, any case). */
export function isHaEnabled(metadata: Readonly<Record<string, string>>, key: string): boolean {
  const value = metadata[key];
  return value !== undefined && OSLO_TRUE_STRINGS.includes(value.trim().toLowerCase());
}

/** Why the server's host is the host flow's business, or null when the instance flow may act. */
function hostFlowReason(facts: InstanceRestartFacts, host: string): string | null {
  const service = facts.computeService;
  if (service?.forcedDown) return `its host ${host} is forced_down: the host flow recovers it`;
  if (service && service.state !== 'up') return `its host ${host} is down in Nova: the host flow recovers it`;
  if (facts.openIncidentId !== null)
    return `its host ${host} is under lifeguard incident ${facts.openIncidentId}: the host flow recovers it`;
  return null;
}

/** Why the server, as it is now, is not restarted, or null when it may be. */
function serverReason(
  facts: InstanceRestartFacts,
  server: ServerNow,
  settings: InstanceRestartSettings,
): string | null {
  const vmState = server.vmState ?? '';
  if (LEFT_ALONE_VM_STATES.includes(vmState)) return `its vm_state is ${vmState}: Masakari leaves it alone`;
  if (vmState === 'error' && settings.ignoreInstancesInErrorState)
    return 'its vm_state is error and ignore_instances_in_error_state is set';
  if (!RESTARTABLE_VM_STATES.includes(vmState))
    return `its status is ${server.status} (vm_state ${vmState || 'unknown'}): nothing a restart can bring back`;
  if (server.host !== null && short(server.host) !== short(facts.reportedHost))
    return `it runs on ${server.host} now, not on ${facts.reportedHost} where the failure was reported`;
  return null;
}

/**
 * The instance restart rule (docs/instance-restart.md#the-rule): whether one reported instance
 * failure is answered by restarting the guest through Nova, judged on the world read now.
 */
export function instanceRestartDecision(
  facts: InstanceRestartFacts,
  settings: InstanceRestartSettings,
): InstanceRestartDecision {
  const { failure, server } = facts;
  if (!isMasakariInstanceFailure(failure))
    return ignore(
      `${failure.event}/${failure.virDomainEvent ?? '-'} is not an instance failure Masakari acts on`,
    );
  if (server === null) return ignore('the server no longer exists in Nova');
  if (!settings.processAllInstances && !isHaEnabled(server.metadata, settings.haEnabledMetadataKey))
    return ignore(`not ${settings.haEnabledMetadataKey}=True in its metadata`, 'finished');
  const host = server.host ?? facts.reportedHost;
  const hostReason = hostFlowReason(facts, host);
  if (hostReason !== null) return ignore(hostReason);
  const notRestartable = serverReason(facts, server, settings);
  if (notRestartable !== null) return ignore(notRestartable);
  if (facts.ownProgress === 'start-sent' && server.status === 'ACTIVE' && server.taskState === null)
    return { action: 'confirm', reason: 'this restart already brought the server back to ACTIVE' };
  if (server.taskState !== null)
    return { action: 'wait', reason: `Nova has task ${server.taskState} under way on the server` };
  if (facts.ownProgress === null) {
    const laterRestart = facts.otherRestartsBeganAt.find(
      (began) => began.getTime() >= facts.observedAt.getTime(),
    );
    if (laterRestart !== undefined)
      return ignore(`already restarted at ${laterRestart.toISOString()}, after this failure was observed`);
    const since = facts.now.getTime() - HOUR_MILLISECONDS;
    const withinHour = facts.otherRestartsBeganAt.filter((began) => began.getTime() > since).length;
    if (withinHour >= settings.maxRestartsPerHour)
      return {
        action: 'give-up',
        restartsWithinHour: withinHour,
        reason: `restarted ${withinHour} time(s) within the last hour (at most ${settings.maxRestartsPerHour}): left for a person`,
      };
  }
  const vmState = server.vmState ?? '';
  return {
    action: 'restart',
    resetToActive: vmState === 'error' || vmState === 'resized',
    stop: vmState !== 'stopped',
    reason: `${failure.event}/${failure.virDomainEvent} on ${host}; status ${server.status}`,
  };
}
