import { IncidentId } from '@lifeguard/contracts';

/**
 * The `disabled_reason` markers written on a compute service while lifeguard (or InstanceHA) handles
 * it, and the parser that recognises both, so an operator can switch from InstanceHA to lifeguard in
 * the middle of an incident (docs/instance-ha-rules.md#service-categorisation, docs/instance-ha-rules.md#nova-marking).
 *
 * lifeguard writes (timestamp = ISO 8601 UTC, `incident=` omitted only when the reason would exceed
 * Nova's 255 characters):
 *   `lifeguard evacuation: <ts> incident=<id>`              fenced, evacuation in progress
 *   `lifeguard evacuation (kdump): <ts> incident=<id>`      same, the host was kdump-fenced
 *   `lifeguard evacuation complete: <ts> incident=<id>`     evacuated, waiting for re-enable
 *   `lifeguard evacuation complete (kdump): <ts> incident=<id>`
 *   `lifeguard evacuation FAILED: <ts> incident=<id>`       a person must act
 *   `lifeguard-reserved: <ts>`                              a spare host back in the pool
 *   `lifeguard process-stopped: <ts> process=nova-compute`  a live host whose nova-compute stopped
 *                                                           (HEARTBEAT_DETECTION; enabled again when it runs)
 */

/** What a marker says about a host. */
export type MarkerKind = 'evacuating' | 'complete' | 'failed' | 'reserved' | 'process-stopped' | 'none';

/** Who wrote the reason: lifeguard, InstanceHA (HEAD or classic), or someone else (an operator). */
export type MarkerOrigin = 'lifeguard' | 'instanceha' | 'operator';

export interface DisabledReasonMarker {
  readonly kind: MarkerKind;
  /** null when there is no reason at all. */
  readonly origin: MarkerOrigin | null;
  /** The host was kdump-fenced (`(kdump)` in the marker). */
  readonly kdump: boolean;
  /** InstanceHA's start-up reconciliation marked the host (`(recovered)`). */
  readonly recovered: boolean;
  /** The marker's timestamp as written, or null. */
  readonly timestamp: string | null;
  /** lifeguard's incident id, when the marker carries one. */
  readonly incidentId: string | null;
}

/** Nova's limit for `disabled_reason` (docs/instance-ha-rules.md#nova-marking). */
export const DISABLED_REASON_MAXIMUM_LENGTH = 255;

/** The lifeguard marker kinds that can be written. */
export type WritableMarkerKind = Exclude<MarkerKind, 'none'>;

export interface MarkerInput {
  kind: WritableMarkerKind;
  /** The host was kdump-fenced (evacuating and complete markers only). */
  kdump?: boolean;
  /** The incident the marker belongs to (not used for `reserved`). */
  incidentId?: string | null;
  /** When; default now. */
  at?: Date;
}

const LIFEGUARD_PATTERN =
  /^lifeguard evacuation(?<stage> complete| FAILED)?(?<kdump> \(kdump\))?: (?<timestamp>\S+)(?: incident=(?<incident>\S+))?/;
const LIFEGUARD_RESERVED_PATTERN = /^lifeguard-reserved: (?<timestamp>\S+)/;
const LIFEGUARD_PROCESS_STOPPED_PATTERN = /^lifeguard process-stopped: (?<timestamp>\S+)/;

/**
 * Builds a lifeguard `disabled_reason` marker of at most 255 characters.
 * @throws RangeError for a `kdump` flag on a FAILED, reserved or process-stopped marker (those have no kdump form)
 */
export function formatDisabledReason(input: MarkerInput): string {
  const timestamp = (input.at ?? new Date()).toISOString();
  const kdump = input.kdump === true;
  if (kdump && (input.kind === 'failed' || input.kind === 'reserved' || input.kind === 'process-stopped')) {
    throw new RangeError(`a ${input.kind} marker has no kdump form`);
  }
  if (input.kind === 'reserved') return `lifeguard-reserved: ${timestamp}`;
  if (input.kind === 'process-stopped') return `lifeguard process-stopped: ${timestamp} process=nova-compute`;
  const stage = input.kind === 'complete' ? ' complete' : input.kind === 'failed' ? ' FAILED' : '';
  const base = `lifeguard evacuation${stage}${kdump ? ' (kdump)' : ''}: ${timestamp}`;
  if (!input.incidentId) return base;
  const full = `${base} incident=${input.incidentId}`;
  return full.length <= DISABLED_REASON_MAXIMUM_LENGTH ? full : base;
}

const NONE: DisabledReasonMarker = {
  kind: 'none',
  origin: null,
  kdump: false,
  recovered: false,
  timestamp: null,
  incidentId: null,
};

function timestampAfterColon(reason: string, marker: string): string | null {
  const start = reason.indexOf(marker);
  if (start < 0) return null;
  const colon = reason.indexOf(': ', start);
  if (colon < 0) return null;
  const token = reason
    .slice(colon + 2)
    .trim()
    .split(/\s+/)[0];
  return token ? token : null;
}

/**
 * Recognises a `disabled_reason`: lifeguard's markers (anchored at the start), InstanceHA's markers by
 * InstanceHA's own substring rules (`instanceha evacuation` with `FAILED` / `complete` / `(kdump)` /
 * `(recovered)`, the classic agent's `evacuation FAILED`), and any other reason containing `reserved`
 * as a reserved host (case-sensitive, as InstanceHA's pool rule, docs/instance-ha-rules.md#reserved-hosts). Anything else is the
 * operator's own reason (kind `none`); an empty or missing reason has origin null.
 */
export function parseDisabledReason(reason: string | null | undefined): DisabledReasonMarker {
  if (reason === null || reason === undefined || reason.trim() === '') return NONE;
  const ours = LIFEGUARD_PATTERN.exec(reason);
  if (ours?.groups) {
    const stage = ours.groups.stage;
    const incident = ours.groups.incident;
    return {
      kind: stage === ' complete' ? 'complete' : stage === ' FAILED' ? 'failed' : 'evacuating',
      origin: 'lifeguard',
      kdump: ours.groups.kdump !== undefined,
      recovered: false,
      timestamp: ours.groups.timestamp ?? null,
      incidentId: incident && IncidentId.safeParse(incident).success ? incident : null,
    };
  }
  const stopped = LIFEGUARD_PROCESS_STOPPED_PATTERN.exec(reason);
  if (stopped?.groups) {
    return {
      ...NONE,
      kind: 'process-stopped',
      origin: 'lifeguard',
      timestamp: stopped.groups.timestamp ?? null,
    };
  }
  const reserved = LIFEGUARD_RESERVED_PATTERN.exec(reason);
  if (reserved?.groups) {
    return { ...NONE, kind: 'reserved', origin: 'lifeguard', timestamp: reserved.groups.timestamp ?? null };
  }
  if (reason.includes('instanceha evacuation')) {
    const kind: MarkerKind = reason.includes('instanceha evacuation FAILED')
      ? 'failed'
      : reason.includes('instanceha evacuation complete')
        ? 'complete'
        : 'evacuating';
    return {
      kind,
      origin: 'instanceha',
      kdump: reason.includes('kdump'),
      recovered: reason.includes('(recovered)'),
      timestamp: timestampAfterColon(reason, 'instanceha evacuation'),
      incidentId: null,
    };
  }
  if (reason.includes('evacuation FAILED')) {
    // The classic agent wrote its failure marker without the `instanceha` prefix (docs/instance-ha-rules.md#the-classic-agent).
    return {
      ...NONE,
      kind: 'failed',
      origin: 'instanceha',
      timestamp: timestampAfterColon(reason, 'evacuation FAILED'),
    };
  }
  if (reason.includes('instanceha-reserved')) {
    return {
      ...NONE,
      kind: 'reserved',
      origin: 'instanceha',
      timestamp: timestampAfterColon(reason, 'instanceha-reserved'),
    };
  }
  if (reason.includes('reserved')) return { ...NONE, kind: 'reserved', origin: 'operator' };
  return { ...NONE, origin: 'operator' };
}
