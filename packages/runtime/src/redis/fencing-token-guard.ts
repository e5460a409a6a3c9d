import type { Redis } from 'ioredis';

// KEYS[1] highest token seen; ARGV[1] this message's token.
// Older than the highest seen → 0 (stale). Otherwise remember it and accept → 1.
const OBSERVE = `
local highest = tonumber(redis.call('GET', KEYS[1]) or '-1')
local token = tonumber(ARGV[1])
if token < highest then return 0 end
if token > highest then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`;

/**
 * Rejects work from a stale leader: remembers the highest fencing token seen (shared in Redis by
 * every consumer replica) and accepts a token only if it is not older. Equal tokens are accepted
 * (the same leader's later messages).
 */
export class FencingTokenGuard {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  /** @returns true when `token` is current (and records it), false when a newer leader was already seen */
  async accept(token: number): Promise<boolean> {
    return (await this.redis.eval(OBSERVE, 1, this.key, String(token))) === 1;
  }

  /** The highest token seen so far, or null. */
  async highest(): Promise<number | null> {
    const value = await this.redis.get(this.key);
    return value === null ? null : Number(value);
  }
}
