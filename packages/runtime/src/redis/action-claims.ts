import type { RedisClient } from './redis-client.ts';
import { defineRedisScripts, type RedisScript, runScript } from './redis-script.ts';

/** How long a claim's record is kept after its last take, in seconds (7 days: longer than any incident's work). */
export const ACTION_CLAIM_RECORD_SECONDS = 7 * 24 * 3600;

// KEYS[1] the claim (a hash: token, name, expires, generation). ARGV[1] the taker's token, ARGV[2] its
// name, ARGV[3] the claim's lifetime in milliseconds, ARGV[4] how long the record is kept, seconds.
// Times are Redis' own clock (TIME), so that processes on machines whose clocks differ agree.
// - held by this token (whether or not its lifetime ran out: nobody took it since) → extended, 'mine';
// - held by another token whose lifetime has not run out → 'held', with its holder and time left;
// - otherwise (never taken, released, or run out) → taken by this token, its generation counted up.
const TAKE: RedisScript = {
  command: 'lifeguardActionClaimTake',
  lua: `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local fields = redis.call('HMGET', KEYS[1], 'token', 'name', 'expires', 'generation')
local token = fields[1] or ''
local expires = tonumber(fields[3] or '0')
local generation = tonumber(fields[4] or '0')
local expiry = string.format('%.0f', now + tonumber(ARGV[3]))
if token == ARGV[1] then
  redis.call('HSET', KEYS[1], 'expires', expiry)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
  return {'mine', generation, '', '', 0}
end
if token ~= '' and expires > now then
  return {'held', generation, token, fields[2] or '', expires - now}
end
generation = generation + 1
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'name', ARGV[2], 'expires', expiry, 'generation', generation)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return {'taken', generation, token, fields[2] or '', 0}
`,
};

// KEYS[1] the claim; ARGV[1] the holder's token. Only the holder releases it; the generation stays.
const RELEASE: RedisScript = {
  command: 'lifeguardActionClaimRelease',
  lua: `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'token', '', 'name', '', 'expires', '0')
return 1
`,
};

/** Who holds a claim: the token of its holder's run and the process it runs in. */
export interface ClaimHolder {
  readonly token: string;
  readonly name: string;
}

/**
 * What a take answered:
 * - `mine`: this token held it already, without anyone else taking it since (extended);
 * - `taken`: taken now; `generation` 1 means nobody ever held it before, more means a holder before
 *   this one (`previous`, when it had not released it) may have acted since the caller last looked;
 * - `held`: another token holds it for `expiresInMilliseconds` more.
 */
export type ClaimAnswer =
  | { readonly kind: 'mine'; readonly generation: number }
  | { readonly kind: 'taken'; readonly generation: number; readonly previous: ClaimHolder | null }
  | {
      readonly kind: 'held';
      readonly generation: number;
      readonly holder: ClaimHolder;
      readonly expiresInMilliseconds: number;
    };

/**
 * Claims on actions that one run alone may carry out (an instance's evacuate request, a host's
 * power-off), so that two runs of one job — a BullMQ job taken over after its lock lapsed while its
 * first run was only slow — never both act. A claim is a Redis hash at a key the caller names; taking
 * it is one Lua script. It has a lifetime, extended by each take of its holder, after which another
 * run may take it; and a generation, counted up by each new holder and kept when it is released, so
 * that a taker knows whether anyone held it before (then what it read before taking it may be out of
 * date). What to do with each answer is the caller's rule.
 */
export class ActionClaims {
  constructor(private readonly redis: RedisClient) {
    defineRedisScripts(redis, [TAKE, RELEASE]);
  }

  /**
   * Takes the claim at `key` for `holder`, or extends it when `holder` has it, for `lifetimeMilliseconds`.
   * @throws the connection's error (nothing was taken that the caller knows of: it must not act)
   */
  async take(key: string, holder: ClaimHolder, lifetimeMilliseconds: number): Promise<ClaimAnswer> {
    const [kind, generation, token, name, left] = (await runScript(
      this.redis,
      TAKE,
      [key],
      [holder.token, holder.name, Math.max(1, Math.round(lifetimeMilliseconds)), ACTION_CLAIM_RECORD_SECONDS],
    )) as [string, number, string, string, number];
    if (kind === 'mine') return { kind, generation };
    if (kind === 'held')
      return { kind, generation, holder: { token, name }, expiresInMilliseconds: Number(left) };
    return { kind: 'taken', generation, previous: token === '' ? null : { token, name } };
  }

  /** Releases the claim at `key` if `token` holds it; true when it did. */
  async release(key: string, token: string): Promise<boolean> {
    return (await runScript(this.redis, RELEASE, [key], [token])) === 1;
  }
}
