import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run atomically by Redis with EVALSHA, falling back to EVAL (which also loads it)
 * the first time a server does not know it yet.
 */
export class LuaScript {
  readonly sha1: string;

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script with `keys` (KEYS) and `args` (ARGV) and returns Redis's reply. */
  async run(
    redis: Redis,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<string | number>,
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha1, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
