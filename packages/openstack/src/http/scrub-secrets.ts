/**
 * Replaces every occurrence of a secret (token, password, application credential secret) in a text
 * with `***`, so messages built from server answers or URLs can never carry one. Secrets shorter than
 * 4 characters are ignored (they would mangle ordinary words; such secrets are not worth hiding).
 */
export function scrubSecrets(text: string, secrets: ReadonlyArray<string>): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    result = result.split(secret).join('***');
  }
  return result;
}
