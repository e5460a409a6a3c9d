import { RejectedMessageError } from '../errors.ts';
import { leaseTokenKey, nodeMonitorLeaderKey } from './leader-lease.ts';
import type { RedisClient } from './redis-client.ts';
import { defineRedisScripts, type RedisScript, runScript } from './redis-script.ts';

// KEYS[1] highest token seen; KEYS[2] the lease's token counter (highest token issued);
// ARGV[1] this message's token.
// Never issued by the lease → -1 (nothing recorded). Older than the highest issued (a newer leader
// exists, whether or not its messages arrived yet) or than the highest seen → 0 (stale).
// Otherwise remember it and accept → 1.
const OBSERVE: RedisScript = {
  command: 'lifeguardFencingTokenObserve',
  lua: `
local token = tonumber(ARGV[1])
local issued = tonumber(redis.call('GET', KEYS[2]) or '0')
if token > issued then return -1 end
if token < issued then return 0 end
local highest = tonumber(redis.call('GET', KEYS[1]) or '-1')
if token < highest then return 0 end
if token > highest then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`,
};

/**
 * Rejects work from a stale leader: accepts a token only if it is the newest the leader lease issued
 * (its counter, `leaseTokenKey`), so a deposed leader's message that arrives late (a delayed or cut
 * link healing, a paused process resuming) is dropped even before the new leader's first message
 * arrives (docs/failure-modes.md#partitions-between-lifeguards-own-machines); the highest token seen
 * is also kept (shared in Redis by every consumer replica) for operators. Equal tokens are accepted
 * (the same leader's later messages). A token above the highest ever issued is refused and not
 * recorded, so no message can raise the bar above the real leader's token.
 */
export class FencingTokenGuard {
  /**
   * @param key where the highest token seen is kept
   * @param issuedKey the leader lease's token counter (`leaseTokenKey(nodeMonitorLeaderKey(prefix))`)
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly issuedKey: string,
  ) {
    defineRedisScripts(redis, [OBSERVE]);
  }

  /**
   * A guard on the node monitors' leader lease (`<prefix>:node-monitor:leader`), keeping the highest
   * token seen at `seenKey`.
   */
  static forNodeMonitorLeader(redis: RedisClient, keyPrefix: string, seenKey: string): FencingTokenGuard {
    return new FencingTokenGuard(redis, seenKey, leaseTokenKey(nodeMonitorLeaderKey(keyPrefix)));
  }

  /**
   * Checks `token` and records it when current (one atomic step in Redis).
   * @returns true when current, false when a newer leader was issued a token (stale)
   * @throws RejectedMessageError when the lease never issued the token (the message is dead-lettered,
   *   nothing is recorded)
   */
  async accept(token: number): Promise<boolean> {
    const result = await runScript(this.redis, OBSERVE, [this.key, this.issuedKey], [String(token)]);
    if (result === -1) {
      const issued = await this.issued();
      throw new RejectedMessageError(
        `fencing token ${token} was never issued by the leader lease (highest issued: ${issued ?? 'none'})`,
      );
    }
    return result === 1;
  }

  /** The highest token seen so far, or null. */
  async highest(): Promise<number | null> {
    const value = await this.redis.get(this.key);
    return value === null ? null : Number(value);
  }

  /** The highest token the leader lease has issued, or null when it never issued one. */
  async issued(): Promise<number | null> {
    const value = await this.redis.get(this.issuedKey);
    return value === null ? null : Number(value);
  }
}
