import {
  type Incident,
  migrationsInProgress,
  parseDisabledReason,
  TERMINAL_MIGRATION_STATUSES,
} from '@lifeguard/instance-ha';
import type { ComputeService, Migration } from '@lifeguard/openstack';

/** Nova's default `service_down_time`, in seconds: a service silent for longer is down. */
export const NOVA_SERVICE_DOWN_TIME_SECONDS = 60;

/** Incident states in which lifeguard is still working on the host (fencing or evacuating it). */
export const INCIDENT_IN_PROGRESS_STATES: ReadonlySet<Incident['state']> = new Set([
  'open',
  'fencing',
  'fenced',
  'evacuating',
]);

/** One change `host rehabilitate` makes, in this order. */
export type RehabilitationStep =
  | 'unset-forced-down'
  | 'wait-until-up'
  | 'enable'
  | 'close-incident'
  | 'publish-reenabled';

export interface RehabilitationInput {
  readonly host: string;
  /** The host's nova-compute service as Nova lists it now. */
  readonly service: ComputeService;
  /** lifeguard's open incident of the host, or null. */
  readonly incident: Incident | null;
  /** The evacuation migrations whose source is the host (any age). */
  readonly migrations: ReadonlyArray<Migration>;
  /** Seconds of silence after which Nova counts a service down (`service_down_time`). */
  readonly serviceDownTimeSeconds: number;
  readonly now: Date;
}

/** What `host rehabilitate` concluded before changing anything. */
export type RehabilitationVerdict =
  /** Not safe or not lifeguard's to do: why, and what the operator can do. */
  | {
      readonly kind: 'refuse';
      readonly reasons: ReadonlyArray<string>;
      readonly hints: ReadonlyArray<string>;
    }
  /** The host is enabled, not forced down, and has no open incident. */
  | { readonly kind: 'nothing-to-do'; readonly reason: string }
  /** The steps to take, in order, and what was checked. */
  | {
      readonly kind: 'plan';
      readonly steps: ReadonlyArray<RehabilitationStep>;
      readonly checks: ReadonlyArray<string>;
    };

function ageSeconds(iso: string | null | undefined, now: Date): number | null {
  if (!iso) return null;
  // Nova's updated_at has no zone and is UTC.
  const parsed = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(parsed) ? null : (now.getTime() - parsed) / 1000;
}

/** What the rehabilitation checks found: reasons to refuse, hints for the operator, checks that passed. */
interface Findings {
  readonly reasons: string[];
  readonly hints: string[];
  readonly checks: string[];
}

/** Check 1: lifeguard is not still fencing or evacuating the host. */
function checkIncident({ host, incident }: RehabilitationInput, { reasons, hints, checks }: Findings): void {
  if (incident && INCIDENT_IN_PROGRESS_STATES.has(incident.state)) {
    reasons.push(
      `lifeguard is still handling ${host}: incident ${incident.id} is ${incident.state} (${incident.fence ? 'fenced' : 'not fenced yet'})`,
    );
    hints.push(
      `follow it with \`lifeguard incident ${incident.id}\`; rehabilitate once it is evacuated or failed`,
    );
  } else if (incident) {
    checks.push(`incident ${incident.id} is ${incident.state}`);
  } else {
    checks.push('no open incident');
  }
}

/** Check 2: the host is not disabled or forced down for someone else's reason. */
function checkMarker(
  { host, service, incident }: RehabilitationInput,
  { reasons, hints, checks }: Findings,
): void {
  const marker = parseDisabledReason(service.disabled_reason);
  const disabled = service.status.includes('disabled');
  const forcedDown = service.forced_down === true;
  if (marker.kind === 'reserved') {
    reasons.push(
      `${host} is a reserved host ("${service.disabled_reason}"): lifeguard enables it when an evacuation needs it`,
    );
  } else if (incident === null && marker.kind === 'none' && (disabled || forcedDown)) {
    const why = service.disabled_reason ? `"${service.disabled_reason}"` : 'no reason given';
    reasons.push(
      `${host} is ${[disabled ? 'disabled' : null, forcedDown ? 'forced down' : null].filter(Boolean).join(' and ')} (${why}), not by an evacuation: not lifeguard's to undo`,
    );
    hints.push(
      `if it is yours to undo: openstack compute service set ${forcedDown ? '--up ' : ''}${disabled ? '--enable ' : ''}${host} nova-compute`,
    );
  } else if (marker.kind !== 'none') {
    checks.push(`marker: ${marker.kind} (${marker.origin})`);
  }
}

/** Checks 3 and 4: no evacuation from the host is under way or `done`; returns how many are `done`. */
function checkEvacuations(
  { host, migrations }: RehabilitationInput,
  { reasons, hints, checks }: Findings,
): number {
  const evacuations = migrations.filter((migration) => migration.source_compute === host);
  const running = evacuations.filter(
    (migration) => !TERMINAL_MIGRATION_STATUSES.has(migration.status.toLowerCase()),
  );
  const done = evacuations.filter((migration) => migration.status.toLowerCase() === 'done');
  if (migrationsInProgress(evacuations) > 0) {
    reasons.push(
      `${running.length} evacuation(s) from ${host} still in progress: ${running
        .slice(0, 5)
        .map((migration) => `${migration.instance_uuid} (${migration.status})`)
        .join(', ')}${running.length > 5 ? ', ...' : ''}`,
    );
    hints.push('wait for them to finish (lifeguard hosts, lifeguard incidents)');
  }
  if (done.length > 0) {
    reasons.push(
      `${done.length} evacuation(s) from ${host} are "done" but not "completed": nova-compute on ${host} has not started since they finished`,
    );
    hints.push(
      `start nova-compute on ${host} (power the host on if it is off): at start it removes the evacuated instances' local copies and marks the evacuations "completed"; Nova refuses to lift forced_down until then. Then run this again.`,
    );
  }
  if (running.length === 0 && done.length === 0) {
    checks.push(
      `${evacuations.length} evacuation(s) from ${host}, none in progress or waiting for a restart`,
    );
  }
  return done.length;
}

/** Check 5: the host's nova-compute reports (unless `done` evacuations wait for its restart). */
function checkReporting(
  { host, service, now, serviceDownTimeSeconds }: RehabilitationInput,
  { reasons, hints, checks }: Findings,
  doneEvacuations: number,
): void {
  const forcedDown = service.forced_down === true;
  const age = ageSeconds(service.updated_at, now);
  const reporting = forcedDown ? age !== null && age <= serviceDownTimeSeconds : service.state === 'up';
  if (!reporting && doneEvacuations === 0) {
    reasons.push(
      `nova-compute on ${host} is not reporting (state ${service.state ?? 'unknown'}, last report ${age === null ? 'never' : `${Math.round(age)} s ago`}${forcedDown ? `; forced down, so its heartbeats are read: silent for more than service_down_time ${serviceDownTimeSeconds} s` : ''})`,
    );
    hints.push(`start nova-compute on ${host} and wait until it reports, then run this again`);
  } else if (reporting) {
    checks.push(
      `nova-compute reports (last report ${age === null ? 'unknown' : `${Math.round(age)} s ago`})`,
    );
  }
}

/**
 * Decides whether a host left FAILED, disabled or forced down after an incident can be put back into
 * service, following the manual steps of Red Hat's InstanceHA guide and Nova's own rules
 * (docs/instance-ha-rules.md#re-enable, docs/nova-facts.md#evacuation-in-nova):
 * 1. lifeguard is not still fencing or evacuating it (its incident is `evacuated`, `failed`, or none);
 * 2. it is not disabled for someone else's reason (a reserved host, an operator's maintenance);
 * 3. no evacuation from it is still under way (`accepted`, `pre-migrating`, ...);
 * 4. no evacuation from it is `done`: `done` turns `completed` only when the host's nova-compute
 *    starts again and cleans up the evacuated instances — until then Nova refuses to lift forced_down;
 * 5. its nova-compute reports (state `up`, or, while forced down, an `updated_at` younger than
 *    `service_down_time`: Nova reports a forced-down service down whatever its heartbeats).
 * Then: unset `forced_down`, wait until the service reports `up`, enable it, close the incident, and
 * publish `host.reenabled`.
 */
export function planRehabilitation(input: RehabilitationInput): RehabilitationVerdict {
  const { host, service, incident } = input;
  const findings: Findings = { reasons: [], hints: [], checks: [] };
  checkIncident(input, findings);
  checkMarker(input, findings);
  checkReporting(input, findings, checkEvacuations(input, findings));
  const { reasons, hints, checks } = findings;
  const disabled = service.status.includes('disabled');
  const forcedDown = service.forced_down === true;

  if (reasons.length > 0) return { kind: 'refuse', reasons, hints };
  if (!disabled && !forcedDown && incident === null) {
    return { kind: 'nothing-to-do', reason: `${host} is enabled, not forced down, and has no open incident` };
  }
  const steps: RehabilitationStep[] = [];
  if (forcedDown) steps.push('unset-forced-down');
  if (disabled) steps.push('wait-until-up', 'enable');
  if (incident) steps.push('close-incident');
  if (forcedDown || disabled) steps.push('publish-reenabled');
  return { kind: 'plan', steps, checks };
}

/** What each step does, as the plan prints it. */
export function describeStep(step: RehabilitationStep, host: string, incident: Incident | null): string {
  switch (step) {
    case 'unset-forced-down':
      return `lift forced_down: PUT /os-services/<id> {"forced_down": false}`;
    case 'wait-until-up':
      return `wait until nova-compute on ${host} reports up`;
    case 'enable':
      return `enable the compute service: PUT /os-services/<id> {"status": "enabled"}`;
    case 'close-incident':
      return `close incident ${incident?.id ?? '?'} (outcome "rehabilitated by <operator>")`;
    case 'publish-reenabled':
      return 'publish host.reenabled';
  }
}
