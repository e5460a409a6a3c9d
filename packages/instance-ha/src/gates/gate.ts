import type { GateSnapshot } from './gate-snapshot.ts';

/**
 * What a gate says about acting on a host now:
 * - `pass`: this gate lets the action through;
 * - `defer`: not now (THRESHOLD exceeded, DISABLED): look again later, the incident stays open;
 * - `recovered`: the host came back (it reports to Nova, or sends heartbeats): leave it alone and close
 *   its incident as `recovered`;
 * - `refuse`: never act on this decision (the host's compute service is gone).
 */
export type GateVerdict = 'pass' | 'defer' | 'recovered' | 'refuse';

/** One gate's judgement, with the reason in words (logged, and put in events). */
export interface GateJudgement {
  readonly gate: string;
  readonly verdict: GateVerdict;
  readonly reason: string;
}

/** A pure rule judging one host against a snapshot of the world. */
export interface HostGate {
  readonly name: string;
  judge(snapshot: GateSnapshot, host: string): GateJudgement;
}

/** The outcome of a run of gates: the first judgement that is not `pass`, or the last pass. */
export interface GateRun {
  readonly verdict: GateVerdict;
  /** The gate that decided (the last one when every gate passed). */
  readonly gate: string;
  readonly reason: string;
  /** Every judgement made, in order (the run stops at the first that is not `pass`). */
  readonly judgements: ReadonlyArray<GateJudgement>;
}

/** Runs `gates` in order on one host and stops at the first that does not pass. */
export function runGates(gates: ReadonlyArray<HostGate>, snapshot: GateSnapshot, host: string): GateRun {
  const judgements: GateJudgement[] = [];
  for (const gate of gates) {
    const judgement = gate.judge(snapshot, host);
    judgements.push(judgement);
    if (judgement.verdict !== 'pass') return { ...judgement, judgements };
  }
  const last = judgements.at(-1);
  return { verdict: 'pass', gate: last?.gate ?? 'none', reason: 'every gate passed', judgements };
}
