import type { LifeguardEvent } from '@lifeguard/contracts';
import type { VmoveStatus } from '@lifeguard/masakari-api';

/** The events in which lifeguard's evacuation worker says how one instance of a failed host ended. */
export type InstanceOutcomeEvent = Extract<
  LifeguardEvent,
  { type: 'instance.evacuated' | 'instance.evacuation.failed' | 'instance.evacuation.skipped' }
>;

/** A vmove's status and message. */
export interface VmoveVerdict {
  readonly status: VmoveStatus;
  readonly message: string | null;
}

/**
 * The vmove of one instance from its outcome in lifeguard's evacuation
 * (docs/migrating-from-masakari.md#vmoves):
 * - `instance.evacuated` (ACTIVE, or accepted, on another host): `succeeded`;
 * - `instance.evacuation.failed`: `failed`, with lifeguard's reason as the message;
 * - `instance.evacuation.skipped` with reason `deleted` (its owner deleted it once its evacuation was
 *   planned): `ignored`;
 * - `instance.evacuation.skipped` for any other reason (its status, an operator's exclusion, not
 *   evacuable): no vmove (null): the instance was left out of the recovery, as Masakari creates no
 *   vmove for the instances its filters leave out.
 * A pure function.
 */
export function vmoveVerdict(event: InstanceOutcomeEvent): VmoveVerdict | null {
  switch (event.type) {
    case 'instance.evacuated':
      return { status: 'succeeded', message: null };
    case 'instance.evacuation.failed':
      return { status: 'failed', message: event.data.reason };
    case 'instance.evacuation.skipped':
      return event.data.reason === 'deleted'
        ? { status: 'ignored', message: 'deleted by its owner: not moved' }
        : null;
  }
}
