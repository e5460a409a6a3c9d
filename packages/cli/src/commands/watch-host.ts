import { eventIncidentId, type LifeguardEvent } from '@lifeguard/contracts';
import { formatOffset, truncate } from '@lifeguard/operator-views';
import type { CliContext } from '../cli-context.ts';
import { CliError } from '../errors.ts';
import { summariseEvent } from './incidents.ts';
import { gateVerdict } from './watch-gates.ts';

/**
 * What an event means for a watch: keep watching, the story is over, or its main part is over and
 * an epilogue follows (waited for within the time left; running out of time is then not a failure).
 */
export type WatchStep =
  | { readonly kind: 'continue' }
  /**
   * The story is over; `failure` says why it ended badly (the command then exits 1), `hints` what to
   * do next.
   */
  | { readonly kind: 'end'; readonly failure?: string; readonly hints?: ReadonlyArray<string> }
  /**
   * Something holds the story up for now (a gate of the node monitor, published every poll cycle):
   * the first event of each `key` is shown with `note` under it, later ones of the same key are not.
   */
  | { readonly kind: 'held'; readonly key: string; readonly note: string }
  | {
      readonly kind: 'epilogue';
      readonly waitingFor: string;
      readonly end: (event: LifeguardEvent) => boolean;
      /** Said when the time runs out during the epilogue. */
      readonly unfinished: string;
    };

function concernsHost(event: LifeguardEvent, host: string): boolean {
  const data = event.data as { host?: string; hosts?: string[] };
  return data.host === host || (Array.isArray(data.hosts) && data.hosts.includes(host));
}

/**
 * The key under which an event published every poll while nothing changes is shown once: a
 * `host.recovery.requested` repeats, poll after poll, until the evacuation worker re-enables the host;
 * it is shown again only when what it reports changes (status, state, forced_down). Null for an
 * event that is always shown. Pure.
 */
export function repeatKey(event: LifeguardEvent): string | null {
  if (event.type !== 'host.recovery.requested') return null;
  const { incidentId, status, state, forcedDown } = event.data;
  return [event.type, incidentId ?? '', status, state, String(forcedDown)].join(' ');
}

/**
 * How a watch ended: the events shown (oldest first; repeats of a hold are not), why the story ended
 * badly, if it did, and what to do next.
 */
export interface WatchResult {
  readonly events: LifeguardEvent[];
  readonly failure: string | null;
  readonly hints: ReadonlyArray<string>;
}

/**
 * Follows lifeguard's handling of `host` from `since` on, printing each event about it (`+12.345 s
 * host.fenced proof=... method=...`) as progress (on standard error when `json`), until `step(event)`
 * says the story is over. Events of the incidents in `ignoredIncidentIds` (those already open when
 * the watch began) are not part of the story. A hold (`held` step) is shown once per key, with its
 * note; an event published every poll is shown once per repeatKey. Polls the Redis event journal twice a second. While no event of the story has come,
 * `endedWithoutEvents` (when given) is asked too: a reason it gives ends the watch, not as a failure
 * (the host came back before lifeguard acted).
 * @throws CliError when `timeoutSeconds` pass before the main part of the story is over
 */
export async function watchHostEvents(
  cli: CliContext,
  options: {
    host: string;
    since: Date;
    timeoutSeconds: number;
    waitingFor: string;
    step: (event: LifeguardEvent) => WatchStep;
    ignoredIncidentIds?: ReadonlyArray<string>;
    json?: boolean;
    endedWithoutEvents?: () => Promise<string | null>;
  },
): Promise<WatchResult> {
  const journal = await cli.journal();
  const progress = cli.progress(options.json === true);
  const ignored = new Set(options.ignoredIncidentIds ?? []);
  const seen = new Set<string>();
  const shown: LifeguardEvent[] = [];
  const holds = new Set<string>();
  const repeats = new Set<string>();
  const deadline = options.since.getTime() + options.timeoutSeconds * 1000;
  let epilogue: Extract<WatchStep, { kind: 'epilogue' }> | null = null;
  progress.start(options.waitingFor);
  for (;;) {
    const events = (await journal.recent(500)).filter(
      (event) =>
        !seen.has(event.id) &&
        Date.parse(event.occurredAt) >= options.since.getTime() - 1000 &&
        concernsHost(event, options.host) &&
        !ignored.has(eventIncidentId(event) ?? ''),
    );
    for (const event of events) {
      seen.add(event.id);
      const repeat = repeatKey(event);
      if (repeat !== null && repeats.has(repeat)) continue;
      if (repeat !== null) repeats.add(repeat);
      const line = `${formatOffset(Date.parse(event.occurredAt) - options.since.getTime())}  ${event.type}  ${truncate(summariseEvent(event), 160)}`;
      const step: WatchStep = epilogue
        ? epilogue.end(event)
          ? { kind: 'end' }
          : { kind: 'continue' }
        : options.step(event);
      if (step.kind === 'held' && holds.has(step.key)) continue;
      shown.push(event);
      const ending = lineKind(step, event);
      if (step.kind === 'end') {
        progress.stop();
        progress.line(ending, line);
        return { events: shown, failure: step.failure ?? null, hints: step.hints ?? [] };
      }
      progress.line(ending, line);
      if (step.kind === 'held') {
        holds.add(step.key);
        progress.line('info', step.note);
      }
      if (step.kind === 'epilogue') {
        epilogue = step;
        progress.stop();
        progress.start(step.waitingFor);
      }
    }
    const over = shown.length === 0 && options.endedWithoutEvents ? await options.endedWithoutEvents() : null;
    if (over !== null) {
      progress.stop();
      progress.info(over);
      return { events: shown, failure: null, hints: [] };
    }
    if (Date.now() > deadline) {
      if (epilogue) {
        progress.info(epilogue.unfinished);
        return { events: shown, failure: null, hints: [] };
      }
      progress.fail(`no end after ${options.timeoutSeconds} s`);
      throw new CliError(`stopped watching ${options.host} after ${options.timeoutSeconds} s`, [
        'lifeguard may still be working on it: see `lifeguard incidents` and `lifeguard hosts`',
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** How an event's line is marked: a failure that ends the story, a warning, or progress. */
function lineKind(step: WatchStep, event: LifeguardEvent): 'fail' | 'warn' | 'succeed' {
  if (step.kind === 'end' && step.failure) return 'fail';
  if (step.kind === 'held' || event.type.endsWith('.failed') || event.type === 'threshold.exceeded')
    return 'warn';
  return 'succeed';
}

/**
 * The story of a killed host: it ends (as a failure) when its evacuation failed or its fencing failed
 * for good, or when the node monitor said it will not act on the host for a reason waiting does not
 * change (not evacuable, DISABLED, over THRESHOLD on its own: see gateVerdict); a gate that holds it
 * back for now is said once and the watch goes on;
 * once evacuated and powered on again, an epilogue waits for it to be re-enabled (a host left off
 * ends the story at `host.evacuated`). A host that came back before it was fenced or evacuated
 * (`host.recovered`: its incident closed, nothing done to it) ends the story too.
 */
export function recoveryStep(host: string) {
  return (event: LifeguardEvent): WatchStep => {
    const failure = `the recovery of ${host} failed: ${event.type}`;
    const verdict = gateVerdict(event, host);
    if (verdict?.kind === 'final') {
      return {
        kind: 'end',
        failure: `lifeguard will not fence or evacuate ${host}: ${verdict.why}`,
        hints: [
          `it stays down until you bring it back: lifeguard sim revive-host ${host}`,
          `see lifeguard events --host ${host} --type admission.blocked threshold.exceeded`,
        ],
      };
    }
    if (verdict?.kind === 'held') {
      return {
        kind: 'held',
        key: verdict.key,
        note: `${host} is held back: ${verdict.why}; still waiting (repeats of this are not shown)`,
      };
    }
    if (event.type === 'host.evacuation.failed') return { kind: 'end', failure };
    if (event.type === 'host.fencing.failed' && !event.data.recoverable) return { kind: 'end', failure };
    if (event.type === 'host.reenabled') return { kind: 'end' };
    // It came back before lifeguard acted: its incident is closed and nothing more will happen.
    if (event.type === 'host.recovered') return { kind: 'end' };
    if (event.type !== 'host.evacuated') return { kind: 'continue' };
    if (!event.data.poweredOn) return { kind: 'end' };
    return {
      kind: 'epilogue',
      waitingFor: `waiting for ${host} to report again and be re-enabled`,
      end: (next) => next.type === 'host.reenabled',
      unfinished: `${host} is evacuated but not re-enabled yet: lifeguard hosts says why (its nova-compute not reporting again yet, Nova refusing forced_down=false until nova-compute restarts, or LEAVE_DISABLED)`,
    };
  };
}

/** The story of a revived host: it ends when it is re-enabled. */
export function reenableStep(event: LifeguardEvent): WatchStep {
  return event.type === 'host.reenabled' ? { kind: 'end' } : { kind: 'continue' };
}
