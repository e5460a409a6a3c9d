import { likelyMeant } from '@lifeguard/runtime';
import type { ConfigWarning } from './read-key.ts';

export { likelyMeant };

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
