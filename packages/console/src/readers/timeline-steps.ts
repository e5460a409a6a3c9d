import type { LifeguardEvent } from '@lifeguard/contracts';
import type { Incident } from '@lifeguard/instance-ha';
import type { TimelineEntry } from '@lifeguard/operator-views';
import { thresholdReason } from './threshold-reason.ts';

/** How a step of an incident ended: done, failed (where it stopped), or a note (held back, requested). */
export type StepOutcome = 'done' | 'failed' | 'note';

/** One step of an incident's timeline as the console draws it. */
export interface TimelineStep {
  /** `down`, `fenced`, `forced down, evacuation started`, `instance web-1 ACTIVE`, `re-enabled`, ... */
  readonly label: string;
  readonly detail: string;
  readonly outcome: StepOutcome;
  readonly eventType: LifeguardEvent['type'];
  readonly at: string;
  /** Milliseconds since the incident opened. */
  readonly offsetMilliseconds: number;
  /** Milliseconds since the step before (null for the first). */
  readonly sincePreviousMilliseconds: number | null;
}

/** Where an incident stands: finished (re-enabled or closed), stopped (and why), or still running. */
export interface TimelineEnd {
  readonly kind: 'reenabled' | 'closed' | 'stopped' | 'running';
  readonly text: string;
}

const seconds = (value: number) => `${value.toFixed(1)} s`;

/** A server left on its host (`instance.evacuation.skipped`): the reason, and the rule in words. */
function skippedStep(
  data: Extract<LifeguardEvent, { type: 'instance.evacuation.skipped' }>['data'],
): Pick<TimelineStep, 'label' | 'detail' | 'outcome'> {
  return {
    label: `instance ${data.instanceName || data.instanceId} not evacuated: ${data.reason}`,
    detail: data.detail ?? (data.reason === 'deleted' ? 'deleted by its owner' : ''),
    outcome: 'note',
  };
}

/** The label, detail and outcome of one event, in OpenStack's words. */
export function describeStep(event: LifeguardEvent): Pick<TimelineStep, 'label' | 'detail' | 'outcome'> {
  switch (event.type) {
    case 'host.down': {
      const evidence = event.data.evidence;
      return {
        label: event.data.resume ? 'down (resumed incident)' : 'down',
        detail: `Nova: state=${evidence.state} status=${evidence.status} forced_down=${evidence.forcedDown}, last report ${evidence.ageSeconds ?? '?'} s before; fencing token ${event.data.fencingToken}${event.data.kdumpFenced ? '; kdump packets seen' : ''}`,
        outcome: 'done',
      };
    }
    case 'host.fenced':
      return {
        label: 'fenced',
        detail: `proof ${event.data.proof} by ${event.data.method}, ${event.data.attempts} attempt(s), ${seconds(event.data.durationSeconds)}`,
        outcome: 'done',
      };
    case 'host.fencing.failed':
      return {
        label: 'fencing failed',
        detail: `${event.data.reason} (${event.data.attempts} attempt(s)${event.data.recoverable ? ', will be retried' : ', a person must act'})`,
        outcome: 'failed',
      };
    case 'host.evacuation.started':
      return {
        label: 'forced down and disabled; evacuation started',
        detail: `${event.data.instanceCount} instance(s), ${event.data.mode} mode${event.data.reservedHost ? `, reserved host ${event.data.reservedHost}` : ''}`,
        outcome: 'done',
      };
    case 'instance.evacuated':
      return {
        label: `instance ${event.data.instanceName || event.data.instanceId} ACTIVE`,
        detail: `evacuate to ACTIVE on ${event.data.targetHost ?? '(host chosen by Nova)'} in ${seconds(event.data.durationSeconds)}, ${event.data.attempts} attempt(s), migration ${event.data.migrationStatus ?? '-'}`,
        outcome: 'done',
      };
    case 'instance.evacuation.failed':
      return {
        label: `instance ${event.data.instanceName || event.data.instanceId} not evacuated`,
        detail: `${event.data.reason} (${event.data.attempts} attempt(s))`,
        outcome: 'failed',
      };
    case 'instance.evacuation.skipped':
      return skippedStep(event.data);
    case 'host.evacuated':
      return {
        label: 'evacuated',
        detail: `${event.data.evacuatedInstances.length} instance(s) in ${seconds(event.data.durationSeconds)}`,
        outcome: 'done',
      };
    case 'host.evacuation.failed':
      return {
        label: 'evacuation failed',
        detail: `${event.data.reason}; failed: ${event.data.failedInstances.join(', ') || '-'}`,
        outcome: 'failed',
      };
    case 'host.powered-on':
      return { label: 'powered on', detail: `by ${event.data.method}`, outcome: 'done' };
    case 'host.recovery.requested':
      return {
        label: 're-enable requested',
        detail: `Nova: state=${event.data.state} status=${event.data.status} forced_down=${event.data.forcedDown}`,
        outcome: 'note',
      };
    case 'host.reenabled':
      return { label: 're-enabled', detail: 'compute service enabled, forced_down lifted', outcome: 'done' };
    case 'threshold.exceeded':
      return {
        label:
          event.data.scope === 'global'
            ? 'held back by THRESHOLD'
            : `held back by instanceha:max_failures of ${event.data.aggregate ?? '?'}`,
        detail: thresholdReason(event.data),
        outcome: 'note',
      };
    case 'admission.blocked':
      return { label: `held back: ${event.data.gate}`, detail: event.data.reason, outcome: 'note' };
    default:
      return { label: event.type, detail: '', outcome: 'note' };
  }
}

/** The incident's events as timeline steps, each with its offset from the opening and from the step before. */
export function timelineSteps(entries: ReadonlyArray<TimelineEntry>): TimelineStep[] {
  let previous: number | null = null;
  return entries.map(({ offsetMilliseconds, event }) => {
    const step: TimelineStep = {
      ...describeStep(event),
      eventType: event.type,
      at: event.occurredAt,
      offsetMilliseconds,
      sincePreviousMilliseconds: previous === null ? null : offsetMilliseconds - previous,
    };
    previous = offsetMilliseconds;
    return step;
  });
}

/** Where the incident ended or stands now, from its record and its last failed step. */
export function timelineEnd(incident: Incident, steps: ReadonlyArray<TimelineStep>): TimelineEnd {
  if (steps.some((step) => step.eventType === 'host.reenabled')) {
    return { kind: 'reenabled', text: 'the host is back in service' };
  }
  const failure = [...steps].reverse().find((step) => step.outcome === 'failed');
  if (incident.state === 'failed') {
    return {
      kind: 'stopped',
      text: `stopped at ${failure ? `"${failure.label}": ${failure.detail}` : `state ${incident.state}`}; a person must act`,
    };
  }
  if (incident.state === 'closed')
    return { kind: 'closed', text: `closed: ${incident.outcome ?? 'no outcome recorded'}` };
  return { kind: 'running', text: `in progress: state ${incident.state}` };
}
