import { distance } from 'fastest-levenshtein';

/** At most this many letters added, dropped or changed for an unknown key to read as a misspelling. */
const MOST_EDITS = 2;

/**
 * The known key an unknown one most likely misspells (a config.yaml key, an environment variable):
 * the closest by edit distance (Levenshtein, letter case ignored, at most MOST_EDITS edits and fewer
 * than half the key's length), the first by name among equally close ones, or null when none is that
 * close. Pure.
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
