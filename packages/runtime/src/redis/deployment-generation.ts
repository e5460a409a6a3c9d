import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from './redis-client.ts';
import { redisKey } from './redis-connection.ts';
import { defineRedisScripts, type RedisScript, runScript } from './redis-script.ts';

/**
 * The deployment's generation marker, kept in Redis under the key prefix: written once when a
 * deployment first starts, and written again (with `rebuild: pending`) when Redis is found to have
 * lost its memory. See docs/failure-modes.md#redis-restarted-empty.
 */
export const GenerationMarker = z.object({
  /** A UUID, new for every generation of the deployment's Redis contents. */
  id: z.string().min(1),
  /** When this generation's marker was written, ISO 8601. */
  createdAt: z.string().min(1),
  /**
   * `none`: a fresh deployment, nothing to rebuild; `pending`: Redis lost its memory and the node
   * monitor has not yet rebuilt what it can from Nova; `done`: it has.
   */
  rebuild: z.enum(['none', 'pending', 'done']),
  /** The generation whose memory was lost (for `pending` and `done`), else null. */
  lostGenerationId: z.string().nullable(),
});
export type GenerationMarker = z.infer<typeof GenerationMarker>;

/**
 * What a process concludes from the marker it reads and the generation it remembers:
 * - `first-start`: no marker and none ever seen (a fresh deployment: nothing to rebuild);
 * - `same`: the marker it saw before;
 * - `adopted`: a marker, and this process had seen none (it just started);
 * - `memory-lost`: it had seen a generation and Redis now holds none, or another one.
 */
export type GenerationVerdict =
  | { readonly kind: 'first-start' }
  | { readonly kind: 'same' }
  | { readonly kind: 'adopted' }
  | { readonly kind: 'memory-lost'; readonly lostGenerationId: string };

/**
 * Compares the marker found in Redis with the generation this process remembers (pure).
 * @param stored the marker read from Redis, or null when the key is missing
 * @param remembered the generation id this process saw last, or null when it has seen none
 */
export function judgeGeneration(
  stored: GenerationMarker | null,
  remembered: string | null,
): GenerationVerdict {
  if (remembered === null) return stored === null ? { kind: 'first-start' } : { kind: 'adopted' };
  if (stored === null || stored.id !== remembered)
    return { kind: 'memory-lost', lostGenerationId: remembered };
  return { kind: 'same' };
}

/**
 * Whether a fence may run now, as far as Redis' memory goes (pure): refused while the marker is
 * missing although this process saw one (Redis lost its memory and nobody has noticed yet), and while
 * a rebuild is pending. A process that never saw a marker and finds none proceeds: on a fresh
 * deployment there is nothing to rebuild, and every fence still needs its incident in Redis.
 * @returns null when the fence may run, else the reason it may not
 */
export function blankMemoryReason(stored: GenerationMarker | null, remembered: string | null): string | null {
  if (stored === null) {
    return remembered === null
      ? null
      : `Redis holds no deployment generation marker although generation ${remembered} was seen: its memory was lost`;
  }
  if (stored.rebuild === 'pending') {
    return `Redis lost the memory of generation ${stored.lostGenerationId ?? 'unknown'} and the rebuild from Nova has not finished`;
  }
  return null;
}

// KEYS[1] the marker. ARGV[1] the id expected, ARGV[2] the new body. Replaces the marker only if it
// still carries that id (1), else 0.
const REPLACE_IF_SAME: RedisScript = {
  command: 'deploymentGenerationReplaceIfSame',
  lua: `
local body = redis.call('GET', KEYS[1])
if not body then return 0 end
local ok, current = pcall(cjson.decode, body)
if not ok or current.id ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`,
};

/** The marker's key: `<prefix>:deployment:generation`. */
export function generationMarkerKey(keyPrefix: string): string {
  return redisKey(keyPrefix, 'deployment', 'generation');
}

/** What `observe` found: the verdict and the marker now in Redis. */
export interface GenerationObservation {
  readonly verdict: GenerationVerdict;
  readonly marker: GenerationMarker;
}

/**
 * One process's view of the deployment generation. The process remembers the last generation it saw
 * (in memory: it outlives a Redis restart, which is what it is there to notice); Redis keeps the
 * marker. The node monitor writes the marker (`observe`), the fencing worker only reads it (`read`).
 */
export class DeploymentGeneration {
  private rememberedId: string | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    defineRedisScripts(redis, [REPLACE_IF_SAME]);
  }

  /** The generation this process saw last, or null. */
  get remembered(): string | null {
    return this.rememberedId;
  }

  /**
   * Reads the marker; a marker that is not valid JSON of the schema counts as missing.
   * @throws the Redis error when Redis cannot be read
   */
  async read(): Promise<GenerationMarker | null> {
    const body = await this.redis.get(generationMarkerKey(this.keyPrefix));
    if (body === null) return null;
    try {
      const parsed = GenerationMarker.safeParse(JSON.parse(body));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /** Remembers `marker` as the generation this process has seen. */
  remember(marker: GenerationMarker): void {
    this.rememberedId = marker.id;
  }

  /**
   * Reads the marker and judges it (`judgeGeneration`); writes one when there is none (SET NX, so
   * concurrent writers agree on one): `rebuild: none` on a first start, `pending` after a loss.
   * Remembers the marker it ends with.
   * @throws the Redis error when Redis cannot be read or written
   */
  async observe(now: Date = new Date()): Promise<GenerationObservation> {
    let stored = await this.read();
    const verdict = judgeGeneration(stored, this.rememberedId);
    if (stored === null) {
      const lost = verdict.kind === 'memory-lost' ? verdict.lostGenerationId : null;
      const candidate: GenerationMarker = {
        id: randomUUID(),
        createdAt: now.toISOString(),
        rebuild: lost === null ? 'none' : 'pending',
        lostGenerationId: lost,
      };
      await this.redis.set(generationMarkerKey(this.keyPrefix), JSON.stringify(candidate), 'NX');
      stored = (await this.read()) ?? candidate;
    }
    this.remember(stored);
    return { verdict, marker: stored };
  }

  /**
   * Marks the rebuild of generation `id` finished (`rebuild: done`), unless the marker changed since.
   * @returns whether the marker was updated
   */
  async markRebuilt(marker: GenerationMarker): Promise<boolean> {
    const next: GenerationMarker = { ...marker, rebuild: 'done' };
    const written = await runScript(
      this.redis,
      REPLACE_IF_SAME,
      [generationMarkerKey(this.keyPrefix)],
      [marker.id, JSON.stringify(next)],
    );
    if (written === 1) this.remember(next);
    return written === 1;
  }
}
