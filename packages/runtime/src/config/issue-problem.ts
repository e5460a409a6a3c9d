import type { z } from 'zod';

/** What a configuration value is, in the operator's words: `a list`, `a mapping`, `a boolean`, ... */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

const EXPECTED_WORDS: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
};

/**
 * The problem of one zod issue as a configuration error states it. zod's bare "Invalid input" (a
 * missing key, or a value of the wrong type where text is expected) becomes `is required` when
 * `value` (the value at the issue's path) is missing, else `expected <what>, got a list|mapping|...`;
 * any other issue keeps its own message.
 * @param expected what the key takes when zod does not say (a union), e.g. `a string or number`
 */
export function issueProblem(
  issue: z.core.$ZodIssue,
  value: unknown,
  expected = 'a string or number',
): string {
  if (issue.code !== 'invalid_union' && issue.code !== 'invalid_type') return issue.message;
  if (value === undefined || value === null) return 'is required';
  const wanted =
    issue.code === 'invalid_type' ? (EXPECTED_WORDS[issue.expected] ?? issue.expected) : expected;
  return `expected ${wanted}, got ${kindOf(value)}`;
}

/** The value at `path` inside `root` (mappings and lists), or undefined. */
export function valueAtPath(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current = root;
  for (const step of path) {
    current =
      typeof current === 'object' && current !== null
        ? (current as Record<PropertyKey, unknown>)[step as PropertyKey]
        : undefined;
  }
  return current;
}
