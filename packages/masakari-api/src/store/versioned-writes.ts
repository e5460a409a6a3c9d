/**
 * Optimistic concurrency for the Masakari store: a write reads the store's version, then what it
 * needs, decides (pure code), and applies its commands with one Lua script that refuses them if the
 * version moved. Every write bumps the version, so an applied write was decided on a state no other
 * write changed: uniqueness, duplicate and in-use checks hold across any number of API processes.
 */
import { type RedisClient, type RedisScript, runScript } from '@lifeguard/runtime';
import { StoreContentionError } from '../errors.ts';

/** One Redis command of a write: its name, then its arguments (the key first). */
export type WriteCommand = readonly [
  'SET' | 'ZADD' | 'ZREM' | 'HSET' | 'HDEL' | 'SADD' | 'SREM' | 'DEL',
  string,
  ...string[],
];

// KEYS[1] the store's version. ARGV[1] the version the write was decided on, ARGV[2] its commands
// as a JSON array of arrays of strings. Applies them and bumps the version (1), or refuses (0).
export const APPLY_IF_VERSION: RedisScript = {
  command: 'masakariApplyIfVersion',
  lua: `
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
local allowed = {SET=true, ZADD=true, ZREM=true, HSET=true, HDEL=true, SADD=true, SREM=true, DEL=true}
local commands = cjson.decode(ARGV[2])
for _, command in ipairs(commands) do
  if not allowed[command[1]] then return redis.error_reply('command not allowed: ' .. tostring(command[1])) end
end
redis.call('INCR', KEYS[1])
for _, command in ipairs(commands) do redis.call(unpack(command)) end
return 1
`,
};

/** How often a write is decided again after losing to a concurrent one. */
export const WRITE_ATTEMPTS = 100;

/** What a write decided: commands to apply (maybe none) and the value to return once applied. */
export interface WriteDecision<T> {
  commands: ReadonlyArray<WriteCommand>;
  result: T;
}

/**
 * Runs `decide` on the current state and applies its commands if nothing was written meanwhile,
 * deciding again otherwise. `decide` reads through `redis` and may throw a typed error (nothing is
 * written then).
 * @throws StoreContentionError after WRITE_ATTEMPTS lost races
 */
export async function versionedWrite<T>(
  redis: RedisClient,
  versionKey: string,
  operation: string,
  decide: () => Promise<WriteDecision<T>>,
): Promise<T> {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const version = (await redis.get(versionKey)) ?? '0';
    const decision = await decide();
    if (decision.commands.length === 0) return decision.result;
    const applied = await runScript(
      redis,
      APPLY_IF_VERSION,
      [versionKey],
      [version, JSON.stringify(decision.commands)],
    );
    if (applied === 1) return decision.result;
  }
  throw new StoreContentionError(operation, WRITE_ATTEMPTS);
}
