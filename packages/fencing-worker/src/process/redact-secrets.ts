/**
 * Replaces every occurrence of each secret (as written, and URL-encoded) in `text` with `***`.
 * Program output and error messages go through this before they reach a log line, an event or an
 * error: a fence agent may echo what it was given (docs/safety-rules.md#rule-6-secrets-stay-secret).
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | null | undefined>): string {
  let result = text;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) result = result.split(form).join('***');
  }
  return result;
}

/** The last `maximumCharacters` of `text`, trimmed, for error messages (default 600). */
export function tail(text: string, maximumCharacters = 600): string {
  const trimmed = text.trim();
  return trimmed.length <= maximumCharacters ? trimmed : `...${trimmed.slice(-maximumCharacters)}`;
}
