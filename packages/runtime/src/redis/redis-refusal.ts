import { BrokerRefusedError } from '../errors.ts';

/** The variable every Redis connection of lifeguard is configured by. */
const URL_KEY = 'LIFEGUARD_REDIS_URL';

/**
 * Emitted by a client from connectRedis (with the BrokerRefusedError) when Redis refuses it after
 * start-up, on a reconnect: the client has then disconnected for good (it never carries on with
 * database 0), and its owner should stop the process.
 */
export const REDIS_REFUSED_EVENT = 'lifeguard:refused';

/**
 * The database index in a Redis URL's path: `redis://host:6379/3` → 3; no path or `/` → 0.
 * @returns null when the path is anything but a non-negative whole number (`/abc`, `/-1`, `/1/2`)
 */
export function redisDatabaseIndex(url: string | URL): number | null {
  let pathname: string;
  try {
    pathname = (typeof url === 'string' ? new URL(url) : url).pathname;
  } catch {
    return null;
  }
  if (pathname === '' || pathname === '/') return 0;
  if (!/^\/\d+$/.test(pathname)) return null;
  const index = Number(pathname.slice(1));
  return Number.isSafeInteger(index) ? index : null;
}

/** What the config schema says about a database part that redisDatabaseIndex refuses. */
export const REDIS_DATABASE_PROBLEM =
  'the database (the path after host:port) must be a whole number from 0, as in redis://127.0.0.1:6379/0';

interface ReplyLike {
  readonly message: string;
  readonly command?: { readonly name?: string; readonly args?: ReadonlyArray<unknown> };
}

/**
 * The refusal a Redis error means, or null when it means something else (a lost connection, a
 * timeout: Redis is unreachable, not refusing). Refusals: a failed `SELECT` (the database index),
 * a failed `AUTH` (`WRONGPASS`, `ERR invalid password`) and `NOAUTH` (a password is needed).
 * @param address where Redis is, for the message (password masked)
 * @param url the configured URL (for the user name in the hint)
 */
export function redisRefusal(error: unknown, address: string, url: string): BrokerRefusedError | null {
  if (!(error instanceof Error)) return null;
  const { message, command } = error as ReplyLike;
  const commandName = command?.name?.toLowerCase();
  // First: without the password every command fails with NOAUTH, SELECT included.
  if (commandName === 'auth' || /\b(WRONGPASS|NOAUTH)\b/.test(message)) {
    const username = (() => {
      try {
        return decodeURIComponent(new URL(url).username);
      } catch {
        return '';
      }
    })();
    const noPassword = /\bNOAUTH\b/.test(message);
    return new BrokerRefusedError(
      'Redis',
      address,
      URL_KEY,
      noPassword
        ? 'the connection without a password'
        : username
          ? `the user name "${username}" and password`
          : 'the password',
      message,
      noPassword
        ? `Put the password in ${URL_KEY}: redis://:<password>@host:port/db (or redis://<user>:<password>@... for an ACL user).`
        : `Correct the credentials in ${URL_KEY} (redis://[<user>]:<password>@host:port/db).`,
    );
  }
  if (commandName === 'select') {
    const index = String(command?.args?.[0] ?? redisDatabaseIndex(url));
    return new BrokerRefusedError(
      'Redis',
      address,
      URL_KEY,
      `database ${index}`,
      `SELECT ${index}: ${message}`,
      'Use a database this Redis has: 0 up to its `databases` setting minus one (redis.conf; 16 by default, so 0 to 15), or raise that setting.',
    );
  }
  return null;
}
