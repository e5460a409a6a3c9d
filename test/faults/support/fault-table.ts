import { appendFileSync } from 'node:fs';

/**
 * One row of the fault suite's table: what a fault test injected, what was in flight, and what it
 * counted afterwards. Every count is measured by the test from what the system did (events read from
 * the journal or the broker, effects read from the simulated or real cloud), never assumed.
 */
export interface FaultRow {
  /** The fault, in an operator's words: "RabbitMQ restarted mid provisioning stream". */
  readonly fault: string;
  /** What was in flight when it struck: "10000 ports", "1 incident (3 instances)". */
  readonly inFlight: string;
  /** Events (or completions) that never arrived although the work they report was done. */
  readonly eventsLost: number;
  /** Effects done twice: a host fenced twice, an instance evacuated twice, a transition emitted twice with different ids. */
  readonly duplicateEffects: number;
  /** Seconds from the fault's end (the broker back, the worker restarted, ...) to the work resuming; null when nothing had to resume. */
  readonly secondsToResume: number | null;
  /** What the operator sees, in a few words: "alert LifeguardRedisMemoryLost", "fence refused". */
  readonly outcome: string;
}

/**
 * Appends `row` to the suite's results (the file named by LIFEGUARD_FAULT_RESULTS_FILE, which
 * `npm run test:faults` sets and prints as a table after the run). Outside that run it does nothing,
 * so a fault test can also run under `npm test -- <file>`-style invocations without a table.
 */
export function recordFaultRow(row: FaultRow): void {
  const file = process.env.LIFEGUARD_FAULT_RESULTS_FILE;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify(row)}\n`);
}
