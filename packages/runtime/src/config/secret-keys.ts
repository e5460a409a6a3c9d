/** Key names whose values are secrets: masked in errors and logs wherever they appear. */
const SECRET_KEY_PATTERN = /(pass(word|wd)?|secret|token|credential|private[_-]?key|hmac)/i;

/** True when a configuration key or object field names a secret (`password`, `passwd`, `AC_SECRET`, ...). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY_PATTERN.test(key);
}

/**
 * Removes the password from a URL's userinfo, for logs and errors:
 * `amqp://guest:guest@host:5672/` → `amqp://guest:***@host:5672/`. Non-URLs are returned unchanged.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
  }
}
