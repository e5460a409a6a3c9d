import type { IncidentState } from '../incidents/incident.ts';
import { type DisabledReasonMarker, parseDisabledReason } from '../markers/disabled-reason.ts';
import { parseNovaTimestamp } from './nova-time.ts';
import { shortHostname } from './short-hostname.ts';

/** A `nova-compute` service row with every field the rules need, validated. */
export interface ServiceView {
  /** Nova's service id (UUID at 2.53+), for `PUT /os-services/{id}`. */
  readonly id: string;
  readonly host: string;
  /** `host` before its first dot; the key of incidents and kdump state. */
  readonly shortHost: string;
  readonly status: 'enabled' | 'disabled';
  readonly state: 'up' | 'down';
  readonly forcedDown: boolean;
  /** `updated_at` as Nova sent it, or null. */
  readonly updatedAt: string | null;
  /** `updated_at` parsed (naive times are UTC), or null when missing or unparsable. */
  readonly updatedAtDate: Date | null;
  /** Seconds from `updated_at` to the categorisation time, or null. */
  readonly ageSeconds: number | null;
  readonly disabledReason: string | null;
  readonly zone: string | null;
  readonly marker: DisabledReasonMarker;
}

/** Why a service is a fresh failure. */
export type FailureReason = 'state-down' | 'stale' | 'host-agent-silent' | 'monitor-reported';

export interface FreshFailure {
  readonly service: ServiceView;
  /**
   * `state-down` when Nova says down, else `stale` (`updated_at` older than DELTA, Nova still says up);
   * `host-agent-silent` when the host agent channel failed it (HEARTBEAT_DETECTION, hostAgentFailures);
   * `monitor-reported` when a host monitor's report held (judgeMonitorReport).
   */
  readonly reason: FailureReason;
}

/** A record that could not be categorised (a 2.69 partial record from a down cell, missing fields). */
export interface SkippedService {
  readonly host: string | null;
  readonly reason: string;
}

/** A lifeguard incident still open for a host, as the rules need it. */
export interface OpenIncidentSummary {
  readonly id: string;
  readonly state: IncidentState;
}

export interface CategoriseOptions {
  /** The time of the poll. */
  readonly now: Date;
  /** DELTA, in seconds. */
  readonly deltaSeconds: number;
  /** lifeguard's open incidents by short hostname. */
  readonly openIncidents: ReadonlyMap<string, OpenIncidentSummary>;
}

export interface Categorisation {
  /** Every valid service, in Nova's order. */
  readonly services: ReadonlyArray<ServiceView>;
  /** Enabled, not forced down, and down or stale by DELTA (docs/instance-ha-rules.md#service-categorisation "compute_nodes"). */
  readonly freshFailures: ReadonlyArray<FreshFailure>;
  /** Fenced hosts whose evacuation was interrupted, to be resumed. */
  readonly resumeCandidates: ReadonlyArray<ServiceView>;
  /** Hosts lifeguard or InstanceHA evacuated, for the re-enable rules (docs/instance-ha-rules.md#re-enable). */
  readonly reenableCandidates: ReadonlyArray<ServiceView>;
  /** Enabled and forced down by someone else (not lifeguard): left alone (docs/instance-ha-rules.md#where-lifeguard-differs). */
  readonly operatorForcedDown: ReadonlyArray<ServiceView>;
  /** Forced down and disabled with lifeguard's in-progress marker but no open incident: left alone. */
  readonly orphanedLifeguardMarkers: ReadonlyArray<ServiceView>;
  /** Hosts whose evacuation FAILED (lifeguard's or InstanceHA's marker): waiting for a person. */
  readonly failedEvacuations: ReadonlyArray<ServiceView>;
  /** Services whose `updated_at` is missing or unparsable (never stale by DELTA, docs/instance-ha-rules.md#service-categorisation). */
  readonly unparsableUpdatedAt: ReadonlyArray<ServiceView>;
  /** Records skipped for missing or invalid fields. */
  readonly skipped: ReadonlyArray<SkippedService>;
}

type Record_ = Readonly<Record<string, unknown>>;

/**
 * Validates one `os-services` record.
 * @returns the view, or the reason it cannot be used (e.g. a 2.69 partial record: `status UNKNOWN`,
 *   no `state`/`forced_down`/`id`)
 */
/** Memoised parsers for one categorisation: many services share `updated_at` and `disabled_reason`. */
interface Parsers {
  timestamp(text: string | null): Date | null;
  marker(reason: string | null): DisabledReasonMarker;
}

function memoised(): Parsers {
  const timestamps = new Map<string, Date | null>();
  const markers = new Map<string | null, DisabledReasonMarker>();
  // Services that reported in the same second are often listed together: the last one is compared
  // first, which is cheaper than hashing the text for the map.
  let lastText: string | null = null;
  let lastValue: Date | null = null;
  return {
    timestamp(text) {
      if (text === null) return null;
      if (text === lastText) return lastValue;
      let value = timestamps.get(text);
      if (value === undefined) {
        value = parseNovaTimestamp(text);
        timestamps.set(text, value);
      }
      lastText = text;
      lastValue = value;
      return value;
    },
    marker(reason) {
      let value = markers.get(reason);
      if (value === undefined) {
        value = parseDisabledReason(reason);
        markers.set(reason, value);
      }
      return value;
    },
  };
}

const direct: Parsers = { timestamp: parseNovaTimestamp, marker: parseDisabledReason };

export function toServiceView(
  record: unknown,
  now: Date,
  parsers: Parsers = direct,
): ServiceView | SkippedService {
  if (record === null || typeof record !== 'object') return { host: null, reason: 'not an object' };
  const row = record as Record_;
  const host = typeof row.host === 'string' && row.host !== '' ? row.host : null;
  const id = typeof row.id === 'string' || typeof row.id === 'number' ? String(row.id) : null;
  const valid =
    host !== null &&
    id !== null &&
    id !== '' &&
    (row.binary === undefined || row.binary === 'nova-compute') &&
    (row.status === 'enabled' || row.status === 'disabled') &&
    (row.state === 'up' || row.state === 'down') &&
    typeof row.forced_down === 'boolean';
  if (valid) return view(row, host, id, now, parsers);
  const problems: string[] = [];
  if (host === null) problems.push('no host');
  if (row.binary !== undefined && row.binary !== 'nova-compute')
    problems.push(`binary ${String(row.binary)}`);
  if (id === null || id === '') problems.push('no id');
  if (row.status !== 'enabled' && row.status !== 'disabled') {
    problems.push(`status ${row.status === undefined ? 'missing' : JSON.stringify(row.status)}`);
  }
  if (row.state !== 'up' && row.state !== 'down') {
    problems.push(`state ${row.state === undefined ? 'missing' : JSON.stringify(row.state)}`);
  }
  if (typeof row.forced_down !== 'boolean') problems.push('forced_down missing');
  return { host, reason: problems.join(', ') };
}

function view(row: Record_, host: string, id: string, now: Date, parsers: Parsers): ServiceView {
  const updatedAt = typeof row.updated_at === 'string' ? row.updated_at : null;
  const updatedAtDate = parsers.timestamp(updatedAt);
  const disabledReason = typeof row.disabled_reason === 'string' ? row.disabled_reason : null;
  return {
    id,
    host,
    shortHost: shortHostname(host),
    status: row.status as 'enabled' | 'disabled',
    state: row.state as 'up' | 'down',
    forcedDown: row.forced_down as boolean,
    updatedAt,
    updatedAtDate,
    ageSeconds: updatedAtDate ? (now.getTime() - updatedAtDate.getTime()) / 1000 : null,
    disabledReason,
    zone: typeof row.zone === 'string' ? row.zone : null,
    marker: parsers.marker(disabledReason),
  };
}

function isView(value: ServiceView | SkippedService): value is ServiceView {
  return 'shortHost' in value;
}

/**
 * Sorts `nova-compute` services into InstanceHA's sets (docs/instance-ha-rules.md#service-categorisation), with
 * lifeguard's safety differences (docs/instance-ha-rules.md#where-lifeguard-differs):
 *
 * - fresh failure: `status` enabled, `forced_down` false, and `state == down` or `updated_at` older
 *   than now − DELTA (strictly). A missing/unparsable `updated_at` never makes a service stale.
 * - resume candidate: forced down, down, disabled, with an in-progress evacuation marker written by
 *   InstanceHA (switch-over) or by lifeguard *and* an open lifeguard incident for the host (not
 *   failed). A manual force-down is never treated as proof of fencing (unlike InstanceHA's start-up
 *   reconciliation).
 * - re-enable candidate: not a resume candidate, and either disabled with a `complete` marker
 *   (lifeguard's or InstanceHA's), or enabled and forced down *while lifeguard's open incident for the
 *   host is `evacuated`* — an operator's own `forced_down` on an enabled host is left alone
 *   (InstanceHA would undo it).
 * - records with missing or invalid fields (2.69 partial records, `status: UNKNOWN`) are skipped and
 *   reported, never treated as down.
 */
export function categoriseServices(
  records: ReadonlyArray<unknown>,
  options: CategoriseOptions,
): Categorisation {
  const sorted: SortedServices = {
    services: [],
    freshFailures: [],
    resumeCandidates: [],
    reenableCandidates: [],
    operatorForcedDown: [],
    orphanedLifeguardMarkers: [],
    failedEvacuations: [],
    unparsableUpdatedAt: [],
    skipped: [],
  };
  const parsers = memoised();
  const staleBefore = options.now.getTime() - options.deltaSeconds * 1000;
  // One pass: each record is read, and its view sorted, while it is at hand (10,000 every POLL).
  for (const record of records) {
    const each = toServiceView(record, options.now, parsers);
    if (isView(each)) sortService(each, sorted, options.openIncidents, staleBefore);
    else sorted.skipped.push(each);
  }
  return sorted;
}

type SortedServices = { -readonly [Set in keyof Categorisation]: Categorisation[Set][number][] };

/** Puts one valid service in its sets (categoriseServices' rules). */
function sortService(
  service: ServiceView,
  sorted: SortedServices,
  openIncidents: ReadonlyMap<string, OpenIncidentSummary>,
  staleBefore: number,
): void {
  sorted.services.push(service);
  if (service.updatedAtDate === null) sorted.unparsableUpdatedAt.push(service);
  if (service.status === 'enabled' && !service.forcedDown) {
    if (service.state === 'down') sorted.freshFailures.push({ service, reason: 'state-down' });
    else if (service.updatedAtDate !== null && service.updatedAtDate.getTime() < staleBefore) {
      sorted.freshFailures.push({ service, reason: 'stale' });
    }
    return;
  }
  const { marker } = service;
  if (marker.kind === 'failed') {
    sorted.failedEvacuations.push(service);
    return;
  }
  // Only a service that is disabled or forced down gets here: few, so the incident is looked up late.
  const incident = openIncidents.get(service.shortHost) ?? null;
  if (
    service.forcedDown &&
    service.state === 'down' &&
    service.status === 'disabled' &&
    marker.kind === 'evacuating'
  ) {
    if (marker.origin === 'instanceha') sorted.resumeCandidates.push(service);
    else if (incident !== null && incident.state !== 'failed') sorted.resumeCandidates.push(service);
    else if (incident === null) sorted.orphanedLifeguardMarkers.push(service);
    return;
  }
  if (service.status === 'disabled' && marker.kind === 'complete') {
    sorted.reenableCandidates.push(service);
    return;
  }
  if (service.status === 'enabled' && service.forcedDown) {
    if (incident?.state === 'evacuated') sorted.reenableCandidates.push(service);
    else if (incident === null) sorted.operatorForcedDown.push(service);
  }
}
