import type { NotificationType } from '@lifeguard/masakari-api';

/**
 * The (`event`, `vir_domain_event`) pairs of a VM notification Masakari's engine acts on (its instance
 * failure flow); every other pair is ignored (a user's `virsh destroy` gives STOPPED_DESTROYED).
 */
export const RESTARTED_VM_EVENTS: ReadonlyArray<readonly [string, string]> = [
  ['LIFECYCLE', 'STOPPED_FAILED'],
  ['QEMU_GUEST_AGENT_ERROR', 'STOPPED_FAILED'],
  ['IO_ERROR', 'IO_ERROR_REPORT'],
];

/** The process whose stop takes a host's compute service out of scheduling. */
export const NOVA_COMPUTE_PROCESS = 'nova-compute';

/** What lifeguard does with one notification. */
export type NotificationAction =
  /** Nothing, status `ignored` (Masakari's words for a notification deliberately not acted on). */
  | { readonly kind: 'ignore'; readonly reason: string }
  /** Nothing to do, status `finished`. */
  | { readonly kind: 'finish'; readonly reason: string }
  /** A host monitor says the host stopped: a detection signal for the node monitor's gates. */
  | { readonly kind: 'host-failure' }
  /** A guest crashed: an `instance-restart` job. */
  | {
      readonly kind: 'instance-restart';
      readonly instanceId: string;
      readonly event: string;
      readonly virDomainEvent: string;
    }
  /** nova-compute stopped on the host: disable its compute service under lifeguard's marker. */
  | { readonly kind: 'disable-compute-service' }
  /** nova-compute started again: enable its compute service if lifeguard's marker is still there. */
  | { readonly kind: 'enable-compute-service' };

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * Which notifications act, and how (docs/migrating-from-masakari.md#what-each-notification-does), as
 * Masakari's engine decides it: a notification of a disabled segment is ignored; COMPUTE_HOST acts only
 * with `host_status` NORMAL (any case), STARTED finishes, STOPPED is a host failure; VM acts only on
 * RESTARTED_VM_EVENTS; PROCESS STOPPED disables the compute service when the process is nova-compute
 * and finishes otherwise, PROCESS STARTED finishes (lifeguard enables a compute service it disabled
 * for a stopped nova-compute). Events are compared without regard to case. A pure function.
 */
export function notificationAction(input: {
  readonly type: NotificationType;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly segmentEnabled: boolean;
}): NotificationAction {
  const { payload } = input;
  if (!input.segmentEnabled) return { kind: 'ignore', reason: 'the failover segment is disabled' };
  const event = text(payload.event)?.toUpperCase() ?? null;
  if (input.type === 'COMPUTE_HOST') {
    const status = text(payload.host_status);
    if (status === null || status.toUpperCase() !== 'NORMAL')
      return { kind: 'ignore', reason: `host_status is ${status ?? 'missing'}, not NORMAL` };
    if (event === 'STARTED') return { kind: 'finish', reason: 'the host started: nothing to recover' };
    if (event === 'STOPPED') return { kind: 'host-failure' };
    return {
      kind: 'ignore',
      reason: `COMPUTE_HOST event ${event ?? 'missing'} is neither STARTED nor STOPPED`,
    };
  }
  if (input.type === 'VM') {
    const instanceId = text(payload.instance_uuid);
    const virDomainEvent = text(payload.vir_domain_event)?.toUpperCase() ?? null;
    const acted = RESTARTED_VM_EVENTS.some(([e, d]) => e === event && d === virDomainEvent);
    if (!acted || instanceId === null || event === null || virDomainEvent === null)
      return {
        kind: 'ignore',
        reason: `VM event ${event ?? 'missing'}/${virDomainEvent ?? 'missing'} is not an instance failure lifeguard recovers`,
      };
    return { kind: 'instance-restart', instanceId, event, virDomainEvent };
  }
  const process = text(payload.process_name);
  if (event === 'STOPPED')
    return process === NOVA_COMPUTE_PROCESS
      ? { kind: 'disable-compute-service' }
      : { kind: 'finish', reason: `process ${process ?? 'missing'} stopped: no recovery action for it` };
  if (event === 'STARTED')
    return process === NOVA_COMPUTE_PROCESS
      ? { kind: 'enable-compute-service' }
      : { kind: 'finish', reason: `process ${process ?? 'missing'} started: nothing to do` };
  return { kind: 'ignore', reason: `PROCESS event ${event ?? 'missing'} is neither STARTED nor STOPPED` };
}
