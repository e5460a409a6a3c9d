import type { RedisClient } from './redis-client.ts';

/**
 * A Lua script run atomically by Redis as an ioredis custom command (`defineCommand`): ioredis
 * sends the script with EVAL the first time on a connection and EVALSHA after that, and sends it
 * again when the server answers NOSCRIPT (restarted, or `SCRIPT FLUSH`). `command` is the method
 * name the script gets on a connection.
 */
export interface RedisScript {
  readonly command: string;
  readonly lua: string;
  /** True for a script that only reads: it runs when Redis is out of memory (flag `no-writes`). */
  readonly readOnly?: boolean;
}

/**
 * The text Redis runs for `script`: its Lua after a `#!lua` line (Redis 7 script flags). With that
 * line, Redis refuses a script that may write, before its first command, while `used_memory` is
 * over `maxmemory` under `noeviction` ("OOM command not allowed"). Without it Redis starts the script
 * and refuses only its commands that grow memory, so a script that removes a block and then appends
 * the event would keep the removal and lose the event: half applied
 * (docs/failure-modes.md#redis-out-of-memory). A read-only script carries `flags=no-writes` and still
 * runs then.
 */
export function redisScriptSource(script: RedisScript): string {
  return `${script.readOnly ? '#!lua flags=no-writes' : '#!lua'}\n${script.lua.replace(/^\n/, '')}`;
}

type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: Array<string | number>) => Promise<unknown>;

function commandsOf(redis: RedisClient): Record<string, ScriptCommand | undefined> {
  return redis as unknown as Record<string, ScriptCommand | undefined>;
}

/**
 * Defines `scripts` on `redis` (those not defined yet). Call it when a connection is handed to the
 * code that runs the scripts, before its first command: an auto-pipelined connection copies its
 * custom commands into each pipeline when the pipeline is created, so a script defined while a
 * pipeline is filling is missing from that pipeline.
 */
export function defineRedisScripts(redis: RedisClient, scripts: ReadonlyArray<RedisScript>): void {
  const commands = commandsOf(redis);
  for (const script of scripts) {
    if (typeof commands[script.command] !== 'function')
      redis.defineCommand(script.command, { lua: redisScriptSource(script) });
  }
}

/** A script was run on a connection it was never defined on (see defineRedisScripts). */
export class RedisScriptNotDefinedError extends Error {
  constructor(readonly command: string) {
    super(`Redis script ${command} is not defined on this connection; call defineRedisScripts first`);
    this.name = 'RedisScriptNotDefinedError';
  }
}

/**
 * Runs `script`, defined on `redis` beforehand with defineRedisScripts, with `keys` (KEYS) and `args`
 * (ARGV), and returns Redis's reply. It never defines the script itself: on an auto-pipelined
 * connection a definition made while a pipeline is filling breaks that pipeline.
 * @throws RedisScriptNotDefinedError when the script was not defined on `redis`
 * @throws whatever the script raises (ReplyError) or the connection's error
 */
export async function runScript(
  redis: RedisClient,
  script: RedisScript,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
): Promise<unknown> {
  const command = commandsOf(redis)[script.command];
  if (typeof command !== 'function') throw new RedisScriptNotDefinedError(script.command);
  return command.call(redis, keys.length, ...keys, ...args);
}
