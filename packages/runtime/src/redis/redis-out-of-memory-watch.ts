import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.ts';
import type { RedisClient } from './redis-client.ts';

/** What one look at Redis found: whether it accepted a write, and its memory figures in bytes. */
export interface RedisMemoryReading {
  /** False when Redis answered the probe write with an OOM error (maxmemory reached, noeviction). */
  readonly acceptsWrites: boolean;
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

/** The number after `field:` in an INFO section's text, or null. */
function infoNumber(info: string, field: string): number | null {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : null;
}

export interface RedisOutOfMemoryWatchOptions {
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
 * Watches whether Redis still accepts writes (docs/failure-modes.md#brokers): every interval it
 * writes a small probe key and reads INFO memory. While Redis refuses the write with OOM, lifeguard's
 * state could only be half written, so the worker reports it: one log line at error naming OOM and
 * the memory figures when it starts (and one at info when it ends), the gauge
 * `lifeguard_redis_writes_refused` at 1 (alert LifeguardRedisOutOfMemory), and `/readyz` failing its
 * `redis-memory` check. Every write lifeguard makes is refused as a whole meanwhile (Redis refuses a
 * Lua script's first write when out of memory and never stops a script that already wrote), so
 * nothing acts on half-written state: the step fails and is retried once memory is free again.
 */
export class RedisOutOfMemoryWatch {
  private timer: NodeJS.Timeout | null = null;
  private refusing = false;
  private readonly refused: Gauge;
  private readonly used: Gauge;
  private readonly max: Gauge;

  constructor(private readonly options: RedisOutOfMemoryWatchOptions) {
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

  /** True while the last look found Redis refusing writes for lack of memory. */
  get refusingWrites(): boolean {
    return this.refusing;
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
   * Errors other than OOM (Redis unreachable, ...) leave the state as it was: the `redis` readiness
   * check and the connection's own log lines report those.
   */
  async look(): Promise<RedisMemoryReading> {
    const { redis, keyPrefix, instance, logger } = this.options;
    let acceptsWrites = !this.refusing;
    try {
      await redis.set(`${keyPrefix}:memory-probe:${instance}`, String(Date.now()), 'PX', 60_000);
      acceptsWrites = true;
    } catch (error) {
      if (isRedisOutOfMemory(error)) acceptsWrites = false;
    }
    const info = await redis.info('memory').catch(() => null);
    const reading: RedisMemoryReading = {
      acceptsWrites,
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
    if (!acceptsWrites && !this.refusing) {
      logger.error(
        figures,
        'Redis refuses writes: out of memory (OOM, maxmemory reached); lifeguard cannot record state and acts on nothing until memory is freed',
      );
    } else if (acceptsWrites && this.refusing) {
      logger.info(figures, 'Redis accepts writes again (no longer out of memory); lifeguard resumes');
    }
    this.refusing = !acceptsWrites;
    return reading;
  }
}
