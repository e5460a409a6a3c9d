// Types of scripts/test-schedule.mjs, for the tests that import it.
export interface Placement {
  alone: boolean;
  lane: string | null;
}
export const harnessFile: RegExp;
export class TestFileDeclarationError extends Error {}
export function placementOf(path: string, text: string): Placement;
export function readPlacement(path: string): Placement;
export function nextToStart(
  waiting: readonly Placement[],
  running: readonly Placement[],
  slots: number,
  laneWidth?: Record<string, number>,
): number;
export function offerOrder<File extends Placement & { path: string }>(
  files: readonly File[],
  secondsOf: Record<string, number>,
): File[];
export const BACKGROUND_NICE: number;
export function niceOf(placement: Pick<Placement, 'lane'>, slots: number): number;
