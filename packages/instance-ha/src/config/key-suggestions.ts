import { distance } from 'fastest-levenshtein';
import type { ConfigWarning } from './read-key.ts';

/** At most this many letters added, dropped or changed for an unknown key to read as a misspelling. */
const MOST_EDITS = 2;

/**
 * The known key an unknown config.yaml key most likely misspells: the closest by edit distance
 * (Levenshtein, letter case ignored, at most MOST_EDITS edits and fewer than half the key's length),
 * or null when none is that close. Pure.
 */
export function likelyMeant(key: string, known: Iterable<string>): string | null {
  const wanted = key.toUpperCase();
  const limit = Math.min(MOST_EDITS, Math.ceil(wanted.length / 2) - 1);
  let best: { key: string; edits: number } | null = null;
  for (const candidate of known) {
    const edits = distance(wanted, candidate.toUpperCase());
    if (edits > limit) continue;
    if (best === null || edits < best.edits || (edits === best.edits && candidate < best.key))
      best = { key: candidate, edits };
  }
  return best?.key ?? null;
}

/**
 * A warning for each unknown key that looks like a misspelled known one (THRESHHOLD for THRESHOLD):
 * the key is ignored, so the setting the operator meant keeps its default or its other value. Keys
 * that look like nothing known are left to the caller's plain list of accepted keys.
 */
export function misspelledKeyWarnings(
  unknownKeys: ReadonlyArray<string>,
  known: Iterable<string>,
  source: string,
): ConfigWarning[] {
  const knownKeys = [...known];
  const warnings: ConfigWarning[] = [];
  for (const key of unknownKeys) {
    const meant = likelyMeant(key, knownKeys);
    if (meant === null) continue;
    warnings.push({
      key,
      source,
      problem: `not a key lifeguard or InstanceHA knows, and ignored: did you mean ${meant}? ${meant} keeps the value it has without it`,
      value: null,
    });
  }
  return warnings;
}
