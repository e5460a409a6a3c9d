// Which test files may run beside which: the pure part of the test runner's scheduling.
//
// A test file runs beside any other unless it says otherwise in a comment of its own, on a line of
// its first 40:
//   // test-file: runs alone (<why>)              nothing else runs while it does
//   // test-file: lane <name> (<why>)             one file of the lane at a time; others beside it
// Files that need the real-Nova harness (*.real-nova.test.ts, *.real-keystone.test.ts) share one Nova
// and are in the lane `real-nova` without saying so.
import { readFileSync } from 'node:fs';

/** A test file that needs the real-Nova harness. */
export const harnessFile = /\.real-(nova|keystone)\.test\.ts$/;
const declaration = /^\s*\/\/\s*test-file:\s*(runs alone|lane ([a-z0-9-]+))\s*\((.+)\)\s*$/;
const anyDeclaration = /^\s*\/\/\s*test-file:/;

export class TestFileDeclarationError extends Error {}

/**
 * How a file runs beside others, from its text: `{ alone, lane }`.
 * @param {string} path the file's path (for the harness lane and messages)
 * @param {string} text the file's text
 */
export function placementOf(path, text) {
  const lines = text.split('\n').slice(0, 40);
  let placement = { alone: false, lane: harnessFile.test(path) ? 'real-nova' : null };
  for (const line of lines) {
    if (!anyDeclaration.test(line)) continue;
    const match = declaration.exec(line);
    if (!match) {
      throw new TestFileDeclarationError(
        `${path}: "${line.trim()}" is not "// test-file: runs alone (<why>)" nor "// test-file: lane <name> (<why>)"`,
      );
    }
    placement = match[1] === 'runs alone' ? { alone: true, lane: null } : { alone: false, lane: match[2] };
  }
  return placement;
}

export function readPlacement(path) {
  return placementOf(path, readFileSync(path, 'utf8'));
}

/**
 * The next file to start: the first waiting file (in `waiting`'s order) that may run beside `running`
 * with `slots` files at most at once, or -1 to wait. A lane runs as many of its files at once as
 * `laneWidth` gives it (1 when not given: the real-Nova lane is as wide as there are harnesses). A
 * file that runs alone starts only on an idle runner, and nothing starts beside it; while one waits,
 * nothing new starts, so it is never starved.
 * @param {{ alone: boolean, lane: string | null }[]} waiting
 * @param {{ alone: boolean, lane: string | null }[]} running
 * @param {number} slots
 * @param {Record<string, number>} [laneWidth]
 * @returns {number} the index in `waiting`, or -1
 */
export function nextToStart(waiting, running, slots, laneWidth = {}) {
  if (running.length >= slots) return -1;
  if (running.some((file) => file.alone)) return -1;
  const inLane = new Map();
  for (const file of running) {
    if (file.lane !== null) inLane.set(file.lane, (inLane.get(file.lane) ?? 0) + 1);
  }
  for (const [index, file] of waiting.entries()) {
    if (file.alone) {
      if (running.length === 0) return index;
      return -1;
    }
    if (file.lane !== null && (inLane.get(file.lane) ?? 0) >= (laneWidth[file.lane] ?? 1)) continue;
    return index;
  }
  return -1;
}

/**
 * The order files are offered in: the longest first (seconds of an earlier run where known, else
 * the lane files first since a lane runs its files one after another), so that the last minutes of
 * a run are not one long file alone; a lane's files by name. Files that run alone come first of all.
 * @param {{ path: string, alone: boolean, lane: string | null }[]} files
 * @param {Record<string, number>} secondsOf seconds of an earlier run, by path
 */
export function offerOrder(files, secondsOf) {
  const laneSeconds = new Map();
  for (const file of files) {
    if (file.lane === null) continue;
    laneSeconds.set(file.lane, (laneSeconds.get(file.lane) ?? 0) + (secondsOf[file.path] ?? 60));
  }
  const weight = (file) => {
    if (file.alone) return Number.POSITIVE_INFINITY;
    // A lane's files are weighed by the whole lane's time, which is what a late start of it costs,
    // and keep their order by name within it: real-Nova files share one Nova one after another, and
    // that order is the one they are known to pass in (another left a file servers it did not make).
    if (file.lane !== null) return laneSeconds.get(file.lane);
    return secondsOf[file.path] ?? 10;
  };
  return [...files].sort((a, b) => weight(b) - weight(a) || a.path.localeCompare(b.path));
}

/** The nice value of a file that does not wait on the real Nova, when several files run at once. */
export const BACKGROUND_NICE = 10;

/**
 * The nice value (scheduling priority) a file's process group runs at. The real-Nova files wait on
 * Nova, which is slow when the CPU is busy, and their lane is the longest path through a run: they
 * and the harness keep the normal priority (0), and the other files, which only need the CPU, take
 * what is left (BACKGROUND_NICE). One file at a time, nothing competes: every file runs at 0.
 * @param {{ lane: string | null }} placement
 * @param {number} slots files at most at once
 * @returns {number}
 */
export function niceOf(placement, slots) {
  if (slots === 1 || placement.lane === 'real-nova') return 0;
  return BACKGROUND_NICE;
}
