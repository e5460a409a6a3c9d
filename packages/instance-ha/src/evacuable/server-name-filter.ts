import { minimatch } from 'minimatch';

/**
 * SKIP_SERVERS_WITH_NAME (docs/instance-ha-rules.md#evacuable-tags): servers whose name matches any of the
 * patterns are never evacuated. Patterns follow Python's `fnmatch.fnmatchcase`: `*` any run of
 * characters (slashes and leading dots included), `?` one character, `[seq]` / `[!seq]` a character
 * class; matching is case-sensitive; there are no braces, extglobs, negation or escapes (a backslash
 * is an ordinary character).
 *
 * Matching is done by minimatch. Characters that minimatch gives a meaning fnmatch does not have
 * (`/` path separator, `\` escape, `^` class negation) are swapped, in pattern and name alike, for
 * private-use characters that have no meaning to either, so they match only themselves.
 */
const SWAPPED: ReadonlyArray<[string, string]> = [
  ['/', '\uE000'],
  ['\\', '\uE001'],
  ['^', '\uE002'],
];

const OPTIONS = {
  dot: true,
  nobrace: true,
  noext: true,
  nonegate: true,
  nocomment: true,
  noglobstar: true,
  optimizationLevel: 0,
} as const;

function swap(text: string): string {
  let result = text;
  for (const [from, to] of SWAPPED) result = result.replaceAll(from, to);
  return result;
}

/** As Python's `fnmatch.fnmatchcase(name, pattern)`. */
export function fnmatchCase(name: string, pattern: string): boolean {
  return minimatch(swap(name), swap(pattern), OPTIONS);
}
