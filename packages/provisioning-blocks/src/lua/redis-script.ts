import type { Redis } from 'ioredis';

/**
 * A Lua script run atomically by Redis as an ioredis custom command (`defineCommand`): ioredis
 * sends EVALSHA and, when the server does not know the script yet (NOSCRIPT), EVAL, which loads it.
 * `command` is the method name the script gets on a connection; it is defined on first use.
 */
export interface RedisScript {
  readonly command: string;
  readonly lua: string;
}

type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: Array<string | number>) => Promise<unknown>;

/**
 * Runs `script` on `redis` with `keys` (KEYS) and `args` (ARGV), defining it on that connection the
 * first time, and returns Redis's reply.
 * @throws whatever the script raises (ReplyError) or the connection's error
 */
export function runScript(
  redis: Redis,
  script: RedisScript,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  const commands = redis as unknown as Record<string, ScriptCommand | undefined>;
  if (typeof commands[script.command] !== 'function')
    redis.defineCommand(script.command, { lua: script.lua });
  return (commands[script.command] as ScriptCommand).call(redis, keys.length, ...keys, ...args);
}
