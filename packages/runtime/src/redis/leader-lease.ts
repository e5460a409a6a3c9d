import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { RedisClient } from './redis-client.ts';
import { redisKey } from './redis-connection.ts';
import { defineRedisScripts, type RedisScript, runScript } from './redis-script.ts';

// KEYS[1] lease key, KEYS[2] token counter; ARGV[1] holder, ARGV[2] ttl (ms).
// Free → take it with the next token. Ours → extend it, keep the token. Someone else's → nil.
const ACQUIRE: RedisScript = {
  command: 'lifeguardLeaseAcquire',
  lua: `
local current = redis.call('GET', KEYS[1])
if not current then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. '|' .. token, 'PX', ARGV[2])
  return token
end
local separator = string.find(current, '|', 1, true)
local holder = string.sub(current, 1, separator - 1)
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(string.sub(current, separator + 1))
end
return nil
`,
};

// KEYS[1] lease key; ARGV[1] holder. Deletes the lease only when we hold it.
const RELEASE: RedisScript = {
  command: 'lifeguardLeaseRelease',
  lua: `
local current = redis.call('GET', KEYS[1])
if current and string.sub(current, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. '|' then
  return redis.call('DEL', KEYS[1])
end
return 0
`,
};

/**
 * The key of the fencing token counter of the lease at `leaseKey` (`<lease key>:token`): the highest
 * token any holder was ever issued.
 */
export function leaseTokenKey(leaseKey: string): string {
  return `${leaseKey}:token`;
}

/**
 * The Redis key of the node monitors' leader lease (`<prefix>:node-monitor:leader`, holding
 * `<holder>|<fencing token>`): the lease whose tokens every `host.down` and
 * `host.recovery.requested` carries. Read it with `LeaderLease.read` (`lifeguard status`).
 */
export function nodeMonitorLeaderKey(keyPrefix: string): string {
  return redisKey(keyPrefix, 'node-monitor', 'leader');
}

/** A lease as it stands in Redis: who holds it, its fencing token, and how long it has left. */
export interface LeaseHolder {
  readonly holder: string;
  readonly token: number;
  /** Milliseconds before the lease lapses unless renewed. */
  readonly expiresInMilliseconds: number;
}

export interface LeaderLeaseOptions {
  /** The lease key, e.g. `lifeguard:node-monitor:leader`; the token counter is `<key>:token`. */
  key: string;
  /** This contender's unique name: unique per process, so two processes never share one lease. */
  holder: string;
  /** Lease time to live, in milliseconds. A standby takes over at most this long after the leader dies. */
  ttlMilliseconds: number;
  /** How often to renew (and, when not leading, to try to take the lease), in milliseconds (default ttl/3). */
  renewEveryMilliseconds?: number;
  logger: Logger;
}

/**
 * A leader lease on Redis (`SET NX PX` with renewal) carrying a fencing token that increases by one
 * with every new leadership, across all contenders. The holder considers itself leader only until
 * `ttl` after its last successful renewal by its own clock, so a paused or partitioned leader stops
 * acting before a standby can take over. Downstream consumers reject work carrying an older token
 * (see FencingTokenGuard).
 *
 * Events: `acquired` (token: number), `lost` (token: number; taken by another holder, expired or
 * not renewed), `released` (token: number; given up by stop()).
 */
export class LeaderLease extends EventEmitter {
  private currentToken: number | null = null;
  private validUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: LeaderLeaseOptions,
  ) {
    super();
    defineRedisScripts(redis, [ACQUIRE, RELEASE]);
  }

  /**
   * Reads a lease without contending for it (operators: `lifeguard status`).
   * @returns the holder, token and remaining time, or null when nobody holds the lease
   */
  static async read(redis: RedisClient, key: string): Promise<LeaseHolder | null> {
    const [[, value], [, ttl]] = ((await redis.multi().get(key).pttl(key).exec()) ?? [
      [null, null],
      [null, -2],
    ]) as [[unknown, string | null], [unknown, number]];
    if (typeof value !== 'string') return null;
    const separator = value.lastIndexOf('|');
    if (separator < 0) return null;
    return {
      holder: value.slice(0, separator),
      token: Number(value.slice(separator + 1)),
      expiresInMilliseconds: Math.max(Number(ttl), 0),
    };
  }

  /** The fencing token while this process leads, else null. */
  get token(): number | null {
    return this.isLeader ? this.currentToken : null;
  }

  /** True while the lease is held and was renewed within its time to live. */
  get isLeader(): boolean {
    return this.currentToken !== null && Date.now() < this.validUntil;
  }

  /**
   * One attempt to take or extend the lease.
   * @returns the fencing token when this process holds the lease, else null
   */
  async tryAcquire(): Promise<number | null> {
    const started = Date.now();
    const result = (await runScript(
      this.redis,
      ACQUIRE,
      [this.options.key, leaseTokenKey(this.options.key)],
      [this.options.holder, String(this.options.ttlMilliseconds)],
    )) as number | null;
    if (result === null) {
      this.loseLeadership();
      return null;
    }
    const token = Number(result);
    // Measured from before the call: the lease cannot have been granted earlier than that.
    this.validUntil = started + this.options.ttlMilliseconds;
    if (this.currentToken !== token) {
      this.currentToken = token;
      this.options.logger.info({ fencingToken: token, holder: this.options.holder }, 'leader lease acquired');
      this.emit('acquired', token);
    }
    return token;
  }

  /** Ends leadership: `released` (info) when stop() gave the lease up, else `lost` (a warning). */
  private loseLeadership(how: 'lost' | 'released' = 'lost'): void {
    if (this.currentToken === null) return;
    const token = this.currentToken;
    this.currentToken = null;
    this.validUntil = 0;
    const fields = { fencingToken: token, holder: this.options.holder };
    if (how === 'released') this.options.logger.info(fields, 'leader lease released');
    else this.options.logger.warn(fields, 'leader lease lost');
    this.emit(how, token);
  }

  /** Starts contending: tries now, then every `renewEveryMilliseconds`. */
  start(): void {
    this.stopped = false;
    const every =
      this.options.renewEveryMilliseconds ?? Math.max(50, Math.floor(this.options.ttlMilliseconds / 3));
    const tick = async () => {
      if (this.stopped) return;
      try {
        await this.tryAcquire();
      } catch (error) {
        this.options.logger.warn({ err: error }, 'leader lease renewal failed');
        if (!this.isLeader) this.loseLeadership();
      }
      if (this.currentToken !== null && !this.isLeader) this.loseLeadership();
      if (!this.stopped) this.timer = setTimeout(() => void tick(), every);
    };
    void tick();
  }

  /** Stops contending and gives the lease up so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.currentToken !== null) {
      await runScript(this.redis, RELEASE, [this.options.key], [this.options.holder]).catch(() => undefined);
      this.loseLeadership('released');
    }
  }
}
