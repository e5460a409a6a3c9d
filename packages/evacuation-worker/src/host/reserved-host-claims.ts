import {
  defineRedisScripts,
  type RedisClient,
  type RedisScript,
  redisKey,
  runScript,
} from '@lifeguard/runtime';

/** A claim lives at most this long, in seconds (a day), should its incident never release it. */
export const RESERVED_HOST_CLAIM_SECONDS = 24 * 3600;

// KEYS[1] the spare's claim, KEYS[2] the incident's claim. ARGV[1] incident id, ARGV[2] spare host,
// ARGV[3] lifetime in seconds. An incident holds at most one spare: its existing claim is returned;
// else the spare is taken if free ({1, spare}), or refused ({0, holder}).
const CLAIM: RedisScript = {
  command: 'evacuationReservedHostClaim',
  lua: `
local mine = redis.call('GET', KEYS[2])
if mine then return {2, mine} end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[3])) then
  redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3]))
  return {1, ARGV[2]}
end
return {0, redis.call('GET', KEYS[1]) or ''}
`,
};

// KEYS[1] the spare's claim, KEYS[2] the incident's claim; ARGV[1] incident id.
const RELEASE: RedisScript = {
  command: 'evacuationReservedHostRelease',
  lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('DEL', KEYS[2])
return 1
`,
};

/** The answer to a claim: taken now, held already by this incident (maybe another spare), or refused. */
export type ClaimResult =
  | { kind: 'claimed'; host: string }
  | { kind: 'already-held'; host: string }
  | { kind: 'taken'; by: string };

/**
 * Atomic claims on reserved hosts, so that several evacuation worker processes handling several
 * failed hosts at once never hand one spare to two incidents (InstanceHA shared one in-memory pool
 * under a lock, docs/instance-ha-rules.md#reserved-hosts). Keys `<prefix>:evacuation:reserved-host:<spare>` (holder incident) and
 * `<prefix>:evacuation:reserved-by-incident:<incident>` (spare). A claim is released when the spare is
 * enabled for good (evacuation succeeded) or returned to the pool; it expires after a day otherwise.
 */
export class ReservedHostClaims {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    defineRedisScripts(redis, [CLAIM, RELEASE]);
  }

  private spareKey(host: string): string {
    return redisKey(this.keyPrefix, 'evacuation', 'reserved-host', host);
  }

  private incidentKey(incidentId: string): string {
    return redisKey(this.keyPrefix, 'evacuation', 'reserved-by-incident', incidentId);
  }

  /** Claims `host` for the incident; see ClaimResult. */
  async claim(host: string, incidentId: string): Promise<ClaimResult> {
    const [code, value] = (await runScript(
      this.redis,
      CLAIM,
      [this.spareKey(host), this.incidentKey(incidentId)],
      [incidentId, host, String(RESERVED_HOST_CLAIM_SECONDS)],
    )) as [number, string];
    if (code === 1) return { kind: 'claimed', host: value };
    if (code === 2) return { kind: 'already-held', host: value };
    return { kind: 'taken', by: value };
  }

  /** The spare the incident holds, or null. */
  async heldBy(incidentId: string): Promise<string | null> {
    return this.redis.get(this.incidentKey(incidentId));
  }

  /** Releases the incident's claim on `host` (no effect on another incident's claim). */
  async release(host: string, incidentId: string): Promise<void> {
    await runScript(this.redis, RELEASE, [this.spareKey(host), this.incidentKey(incidentId)], [incidentId]);
  }
}
