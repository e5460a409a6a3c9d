import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.ts';
import type { RedisClient } from './redis-client.ts';

/**
 * Why Redis refuses writes: `out-of-memory` (OOM: `maxmemory` reached under `noeviction`) or `disk`
 * (MISCONF: it could not write its append-only file or its last snapshot, e.g. a full disk).
 */
export type RedisWriteRefusal = 'out-of-memory' | 'disk';

/** What one look at Redis found: whether it accepted a write, and its memory figures in bytes. */
export interface RedisMemoryReading {
  /** False when Redis answered the probe write with an OOM or a MISCONF error. */
  readonly acceptsWrites: boolean;
  /** Why it refused (null while it accepts writes, or when the refusal goes on and the look failed otherwise). */
  readonly refusal: RedisWriteRefusal | null;
  /** Redis's own words for the refusal (`MISCONF Errors writing to the AOF file: No space left on device`), or null. */
  readonly refusalMessage: string | null;
  /** INFO memory `used_memory`, in bytes (null when INFO did not answer). */
  readonly usedBytes: number | null;
  /** INFO memory `maxmemory`, in bytes; 0 means no limit (null when INFO did not answer). */
  readonly maxBytes: number | null;
  /** INFO memory `maxmemory_policy`, e.g. `noeviction` (null when INFO did not answer). */
  readonly policy: string | null;
}

/**
 * True when `error` is Redis's refusal of a write for lack of memory: with `maxmemory` reached and
 * the `noeviction` policy (what lifeguard's deployment sets, and BullMQ requires), every command that
 * may grow memory is answered `OOM command not allowed when used memory > 'maxmemory'`. Source: the
 * `maxmemory-policy` section of Redis's key eviction documentation (redis.io/docs, "Key eviction").
 */
export function isRedisOutOfMemory(error: unknown): boolean {
  return error instanceof Error && /^OOM\b/.test(error.message);
}

/**
 * The kind of write refusal `error` is, or null for any other error: OOM (isRedisOutOfMemory), or
 * MISCONF, Redis's answer to every write while it cannot persist: its last append-only-file write
 * failed (`appendonly yes`, a full or failing disk), or its last snapshot failed with
 * `stop-writes-on-bgsave-error yes` and save points set. Redis clears it by itself once a write to
 * disk succeeds again. Source: the persistence and `stop-writes-on-bgsave-error` notes of Redis's
 * configuration documentation (redis.io/docs, "Redis persistence").
 */
export function redisWriteRefusal(error: unknown): RedisWriteRefusal | null {
  if (isRedisOutOfMemory(error)) return 'out-of-memory';
  if (error instanceof Error && /^MISCONF\b/.test(error.message)) return 'disk';
  return null;
}

/** The error log line that starts a refusal, per kind. */
const REFUSAL_STARTED: Readonly<Record<RedisWriteRefusal, string>> = {
  'out-of-memory':
    'Redis refuses writes: out of memory (OOM, maxmemory reached); lifeguard cannot record state and acts on nothing until memory is freed',
  disk: 'Redis refuses writes: it cannot write to its disk (MISCONF: append-only file or snapshot failed); lifeguard cannot record state and acts on nothing until Redis can persist again',
};

/** The number after `field:` in an INFO section's text, or null. */
function infoNumber(info: string, field: string): number | null {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : null;
}

export interface RedisWriteRefusalWatchOptions {
  readonly redis: RedisClient;
  /** The deployment's key prefix; the probe key is `<prefix>:memory-probe:<instance>` (expires in 60 s). */
  readonly keyPrefix: string;
  readonly instance: string;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Between two looks, in milliseconds (default 5000). */
  readonly intervalMilliseconds?: number;
}

/**
 * Watches whether Redis still accepts writes (docs/failure-modes.md#redis-out-of-memory, and
 * #a-full-disk-under-redis): every interval it writes a small probe key and reads INFO memory. While
 * Redis refuses the write (OOM, or MISCONF when it cannot persist), lifeguard cannot record state, so
 * the worker reports it: one log line at error naming the refusal (OOM with the memory figures, or
 * Redis's MISCONF message) when it starts and one at info when it ends, the gauge
 * `lifeguard_redis_writes_refused` at 1 (alert LifeguardRedisRefusesWrites), and `/readyz` failing its
 * `redis-writes` check. Every write lifeguard makes is refused as a whole meanwhile (a transaction is
 * refused whole, and every Lua script carries the `#!lua` line that makes Redis refuse it before its
 * first command; see redisScriptSource), so nothing acts on half-written state: the step fails and is
 * retried once Redis accepts writes again.
 */
export class RedisWriteRefusalWatch {
  private timer: NodeJS.Timeout | null = null;
  private refusing: RedisWriteRefusal | null = null;
  private readonly refused: Gauge;
  private readonly used: Gauge;
  private readonly max: Gauge;

  constructor(private readonly options: RedisWriteRefusalWatchOptions) {
    const registers = [options.registry];
    this.refused = new Gauge({
      name: 'lifeguard_redis_writes_refused',
      help: 'Whether Redis refused the last probe write for lack of memory (OOM: maxmemory reached with noeviction): 1 refused, 0 accepted',
      registers,
    });
    this.used = new Gauge({
      name: 'lifeguard_redis_memory_used_bytes',
      help: "Redis's used_memory at the last look, in bytes",
      registers,
    });
    this.max = new Gauge({
      name: 'lifeguard_redis_memory_max_bytes',
      help: "Redis's maxmemory at the last look, in bytes (0: no limit)",
      registers,
    });
  }

  /** True while the last look found Redis refusing writes (for lack of memory or of disk). */
  get refusingWrites(): boolean {
    return this.refusing !== null;
  }

  /** Looks once now, then every interval until stop(). */
  start(): void {
    void this.look();
    this.timer = setInterval(() => void this.look(), this.options.intervalMilliseconds ?? 5000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Writes the probe key and reads INFO memory, updates the gauges and logs a change of state.
   * Errors other than OOM and MISCONF (Redis unreachable, ...) leave the state as it was: the `redis`
   * readiness check and the connection's own log lines report those.
   */
  async look(): Promise<RedisMemoryReading> {
    const { redis, keyPrefix, instance, logger } = this.options;
    let refusal = this.refusing;
    let refusalMessage: string | null = null;
    try {
      await redis.set(`${keyPrefix}:memory-probe:${instance}`, String(Date.now()), 'PX', 60_000);
      refusal = null;
    } catch (error) {
      const kind = redisWriteRefusal(error);
      if (kind !== null) {
        refusal = kind;
        refusalMessage = (error as Error).message;
      }
    }
    const acceptsWrites = refusal === null;
    const info = await redis.info('memory').catch(() => null);
    const reading: RedisMemoryReading = {
      acceptsWrites,
      refusal,
      refusalMessage,
      usedBytes: info === null ? null : infoNumber(info, 'used_memory'),
      maxBytes: info === null ? null : infoNumber(info, 'maxmemory'),
      policy: info === null ? null : (/^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? null),
    };
    if (reading.usedBytes !== null) this.used.set(reading.usedBytes);
    if (reading.maxBytes !== null) this.max.set(reading.maxBytes);
    this.refused.set(acceptsWrites ? 0 : 1);
    const figures = {
      usedMemoryBytes: reading.usedBytes,
      maxMemoryBytes: reading.maxBytes,
      maxMemoryPolicy: reading.policy,
    };
    if (refusal !== null && refusal !== this.refusing) {
      logger.error({ ...figures, refusal, redisError: refusalMessage }, REFUSAL_STARTED[refusal]);
    } else if (refusal === null && this.refusing !== null) {
      logger.info(
        { ...figures, refusal: this.refusing },
        `Redis accepts writes again (${this.refusing === 'disk' ? 'it can write to its disk' : 'no longer out of memory'}); lifeguard resumes`,
      );
    }
    this.refusing = refusal;
    return reading;
  }
}
