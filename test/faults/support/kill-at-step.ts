import assert from 'node:assert/strict';
import type { RecordedRequest, RequestPhase } from '@lifeguard/cloud-sim';
import type { LifeguardEvent } from '@lifeguard/contracts';
import { EVENTS_REPEATED_EVERY_POLL_CYCLE, EventJournal } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import type { SimulatedDeployment } from '../../e2e/support/simulated-deployment.ts';

/** What the step's moment is matched against: the failed host and what belongs to it. */
export interface StepTarget {
  readonly host: string;
  /** Its nova-compute service id. */
  readonly serviceId: string;
  /** Its BMC's Redfish system id. */
  readonly systemId: string;
  /** The servers lifeguard evacuates from it. */
  readonly evacuable: ReadonlyArray<string>;
}

/** A worker, and the request to the simulated cloud at which it is SIGKILLed. */
export interface KillStep {
  /** The step, in an operator's words: "after fence", "mid evacuation". */
  readonly step: string;
  /** The stack's worker name: `fencing-worker`, `evacuation-worker`, `node-monitor`. */
  readonly worker: string;
  /**
   * Whether this request, in this phase, is the moment: `before-effect` kills before the cloud acts
   * on the request, `after-effect` once it acted and before the worker hears the answer.
   */
  readonly moment: (request: RecordedRequest, phase: RequestPhase, target: StepTarget) => boolean;
  /** The request never reaches the cloud (the worker died before sending it); only with `before-effect`. */
  readonly drop?: boolean;
}

/** What one killed step measured. */
export interface KillOutcome {
  readonly incidentId: string;
  /** When the worker was killed and when the stack had it ready again (epoch milliseconds). */
  readonly killedAt: number;
  readonly readyAgainAt: number;
  /** The incident's events in its journal (Redis), oldest first. */
  readonly journal: ReadonlyArray<LifeguardEvent>;
  /** Accepted evacuate requests per evacuable server. */
  readonly evacuateCalls: Readonly<Record<string, number>>;
  /** The host's power-off and power-on actions at its BMC. */
  readonly powerActions: { readonly off: number; readonly on: number };
  /** Incidents opened for the host during the case (distinct incident ids of its host.down events). */
  readonly incidentsOpened: number;
}

/** An incident's transitions that must each be published (and journalled) once, under one id. */
const ONCE_PER_INCIDENT = [
  'host.down',
  'host.fenced',
  'host.evacuation.started',
  'host.powered-on',
  'host.evacuated',
  'host.reenabled',
] as const;

/**
 * Kills `kill.worker` (SIGKILL) at the first request to the simulated cloud that matches its moment,
 * holding that request until the process is gone, after `sim.killHost(target.host)`; then waits until
 * the incident ends with `host.reenabled` and returns what it counted.
 */
export async function killAtStep(
  deployment: SimulatedDeployment,
  target: StepTarget,
  kill: KillStep,
): Promise<KillOutcome> {
  const { sim, timeline, run } = deployment;
  const worker = run.stack.worker(kill.worker);
  const startedAt = Date.now();
  const kept: { killedAt: number | null } = { killedAt: null };
  const stopObserving = sim.requests.observe(async (request, phase) => {
    if (kept.killedAt !== null || !kill.moment(request, phase, target)) return undefined;
    kept.killedAt = Date.now();
    const exited = worker.exited;
    process.kill(worker.pid!, 'SIGKILL');
    await exited;
    return kill.drop ? 'drop' : undefined;
  });
  try {
    sim.killHost(target.host);
    const down = await timeline.waitFor('host.down', (event) => event.data.host === target.host, 60_000);
    const incidentId = down.data.incidentId;
    await timeline.waitFor(
      'host.reenabled',
      (event) => event.data.host === target.host && event.data.incidentId === incidentId,
      180_000,
    );
    const { killedAt } = kept;
    assert.ok(killedAt !== null, `${kill.worker} was killed ${kill.step}`);
    const readyAgainAt = await waitFor(
      `${kill.worker} restarted and ready`,
      () => {
        const line = run
          .records('stack')
          .find(
            (record) =>
              Date.parse(String(record.time)) >= killedAt &&
              String(record.msg).startsWith(`${kill.worker} restarted (pid `),
          );
        return line ? Date.parse(String(line.time)) : undefined;
      },
      60_000,
    );
    const journal = await journalOf(deployment, incidentId);
    return {
      incidentId,
      killedAt,
      readyAgainAt,
      journal,
      evacuateCalls: Object.fromEntries(target.evacuable.map((id) => [id, sim.evacuateCalls(id)])),
      powerActions: sim.powerActions(target.host),
      incidentsOpened: new Set(
        timeline
          .ofType('host.down')
          .filter((event) => event.data.host === target.host && Date.parse(event.occurredAt) >= startedAt)
          .map((event) => event.data.incidentId),
      ).size,
    };
  } finally {
    stopObserving();
  }
}

/** The incident's journal, once it holds the host.reenabled the events exchange delivered. */
async function journalOf(deployment: SimulatedDeployment, incidentId: string): Promise<LifeguardEvent[]> {
  const journal = new EventJournal(deployment.redis, deployment.keyPrefix);
  return waitFor(
    `the journal of ${incidentId} to hold host.reenabled`,
    async () => {
      const events = await journal.incident(incidentId);
      return events.some((event) => event.type === 'host.reenabled') && events;
    },
    10_000,
  );
}

/** Counts what the fault suite's row reports from an outcome: events lost and duplicate effects. */
export function countOutcome(
  outcome: KillOutcome,
  target: StepTarget,
): { eventsLost: number; duplicateEffects: number; missing: string[]; duplicated: string[] } {
  const missing: string[] = [];
  const duplicated: string[] = [];
  const idsOf = (predicate: (event: LifeguardEvent) => boolean) =>
    new Set(outcome.journal.filter(predicate).map((event) => event.id));
  const transitions = [
    ...ONCE_PER_INCIDENT.map((type) => ({
      name: type,
      ids: idsOf((event) => event.type === type),
    })),
    ...target.evacuable.map((serverId) => ({
      name: `instance.evacuated ${serverId}`,
      ids: idsOf(
        (event) =>
          event.type === 'instance.evacuated' &&
          (event.data as { instanceId: string }).instanceId === serverId,
      ),
    })),
  ];
  for (const { name, ids } of transitions) {
    if (ids.size === 0) missing.push(name);
    if (ids.size > 1) duplicated.push(`${name} under ${ids.size} ids`);
  }
  // Any other event of the incident published twice under two ids for one transition.
  for (const type of new Set(outcome.journal.map((event) => event.type))) {
    if (EVENTS_REPEATED_EVERY_POLL_CYCLE.has(type)) continue;
    if ((ONCE_PER_INCIDENT as ReadonlyArray<string>).includes(type) || type === 'instance.evacuated')
      continue;
    const ids = idsOf((event) => event.type === type);
    if (ids.size > 1) duplicated.push(`${type} under ${ids.size} ids`);
  }
  for (const [serverId, calls] of Object.entries(outcome.evacuateCalls)) {
    if (calls > 1) duplicated.push(`${serverId} evacuated ${calls} times`);
  }
  if (outcome.powerActions.off > 1) duplicated.push(`fenced ${outcome.powerActions.off} times`);
  if (outcome.powerActions.on > 1) duplicated.push(`powered on ${outcome.powerActions.on} times`);
  if (outcome.incidentsOpened > 1) duplicated.push(`${outcome.incidentsOpened} incidents opened`);
  return { eventsLost: missing.length, duplicateEffects: duplicated.length, missing, duplicated };
}

/** Seconds from `from` to the first event of the incident that occurred after the kill (the work resumed). */
export function secondsToFirstEventAfterKill(outcome: KillOutcome, from: number): number {
  const next = outcome.journal.find(
    (event) =>
      !EVENTS_REPEATED_EVERY_POLL_CYCLE.has(event.type) && Date.parse(event.occurredAt) >= outcome.killedAt,
  );
  assert.ok(next, 'an event of the incident occurred after the kill');
  return Math.max(0, (Date.parse(next.occurredAt) - from) / 1000);
}
