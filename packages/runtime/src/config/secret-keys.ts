/** Key names whose values are secrets: masked in errors and logs wherever they appear. */
const SECRET_KEY_PATTERN = /(pass(word|wd)?|secret|token|credential|private[_-]?key|hmac)/i;

/** True when a configuration key or object field names a secret (`password`, `passwd`, `AC_SECRET`, ...). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY_PATTERN.test(key);
}

/**
 * Removes the password from a URL's userinfo, for logs and errors:
 * `amqp://guest:guest@host:5672/` → `amqp://guest:***@host:5672/`; every address of a comma-separated
 * list too. Non-URLs are returned unchanged.
 */
export function redactUrl(url: string): string {
  // A list of addresses (`amqp://u:p@h1/v,amqp://u:p@h2/v`, oslo's `rabbit://u:p@h1,u:p@h2/v`).
  if (url.includes(',')) return url.replace(/(\/\/|,)([^:/@,]*):[^@/,]*@/g, '$1$2:***@');
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
  }
}
