import {
  defineRedisScripts,
  type RedisClient,
  type RedisScript,
  redisKey,
  runScript,
} from '@lifeguard/runtime';
import { shortHostname } from '../services/short-hostname.ts';
import { PlacementDirective, PlacementOutcome } from './placement-directive.ts';

/** How long a directive is kept (seconds): an evacuation deferred this long plans without it. */
export const PLACEMENT_DIRECTIVE_TTL_SECONDS = 7 * 24 * 3600;
/** How long an incident's placement outcome is kept (seconds), as a closed incident. */
export const PLACEMENT_OUTCOME_TTL_SECONDS = 30 * 24 * 3600;

// KEYS[1] the record; ARGV[1] the text read before, ARGV[2] the text to write ('' deletes), ARGV[3]
// the lifetime in seconds. Writes only when the record is still the text read: 1, else 0.
const REPLACE_IF_SAME: RedisScript = {
  command: 'instanceHaPlacementReplaceIfSame',
  lua: `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3])) end
return 1
`,
};

const REPLACE_ATTEMPTS = 20;

function parse<T>(
  schema: { safeParse(value: unknown): { success: boolean; data?: T } },
  text: string | null,
) {
  if (text === null) return null;
  let value: unknown = null;
  try {
    value = JSON.parse(text);
  } catch {}
  const parsed = schema.safeParse(value);
  return parsed.success ? (parsed.data as T) : null;
}

/**
 * The placement directives of failed hosts and the outcomes of their evacuations, in Redis
 * (docs/migrating-from-masakari.md#recovery-methods):
 * `<prefix>:instance-ha:placement-directive:<short host>` (the host's latest directive, JSON, kept
 * PLACEMENT_DIRECTIVE_TTL_SECONDS) and `<prefix>:instance-ha:placement-outcome:<incident>` (JSON).
 * The Masakari engine writes, binds and removes directives and reads outcomes; the evacuation worker
 * reads directives and writes outcomes. Every change is a compare-and-set on the text read.
 */
export class PlacementDirectiveStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    defineRedisScripts(redis, [REPLACE_IF_SAME]);
  }

  private directiveKey(host: string): string {
    return redisKey(this.keyPrefix, 'instance-ha', 'placement-directive', shortHostname(host));
  }

  private outcomeKey(incidentId: string): string {
    return redisKey(this.keyPrefix, 'instance-ha', 'placement-outcome', incidentId);
  }

  /** Writes the host's directive (replacing any earlier one). */
  async write(directive: PlacementDirective): Promise<void> {
    const parsed = PlacementDirective.parse(directive);
    await this.redis.set(
      this.directiveKey(parsed.host),
      JSON.stringify(parsed),
      'EX',
      PLACEMENT_DIRECTIVE_TTL_SECONDS,
    );
  }

  /** The host's directive as stored (any incident), or null (none, or not a directive). */
  async get(host: string): Promise<PlacementDirective | null> {
    return parse<PlacementDirective>(PlacementDirective, await this.redis.get(this.directiveKey(host)));
  }

  /**
   * The directive that governs `incidentId`'s evacuation of `host`: the host's directive when it is
   * bound to that incident, or not bound yet (its report is being judged, or was admitted into this
   * incident a moment ago); null otherwise (none, or another incident's).
   */
  async forIncident(host: string, incidentId: string): Promise<PlacementDirective | null> {
    const directive = await this.get(host);
    if (directive === null) return null;
    return directive.incidentId === null || directive.incidentId === incidentId ? directive : null;
  }

  /** Binds the host's directive written for `reference` to `incidentId`. @returns false when it is gone or newer */
  bind(host: string, reference: string, incidentId: string): Promise<boolean> {
    return this.change(this.directiveKey(host), PLACEMENT_DIRECTIVE_TTL_SECONDS, (text) => {
      const directive = parse<PlacementDirective>(PlacementDirective, text);
      if (directive === null || directive.reference !== reference) return undefined;
      return JSON.stringify({ ...directive, incidentId });
    });
  }

  /** Removes the host's directive when it is the one written for `reference`. */
  remove(host: string, reference: string): Promise<boolean> {
    return this.change(this.directiveKey(host), PLACEMENT_DIRECTIVE_TTL_SECONDS, (text) => {
      const directive = parse<PlacementDirective>(PlacementDirective, text);
      return directive !== null && directive.reference === reference ? '' : undefined;
    });
  }

  /** Records what the evacuation of an incident did with its directive (replacing the last record). */
  async recordOutcome(outcome: PlacementOutcome): Promise<void> {
    const parsed = PlacementOutcome.parse(outcome);
    await this.redis.set(
      this.outcomeKey(parsed.incidentId),
      JSON.stringify(parsed),
      'EX',
      PLACEMENT_OUTCOME_TTL_SECONDS,
    );
  }

  /** Changes the incident's outcome when one is recorded. @returns false when none is */
  updateOutcome(incidentId: string, change: Partial<Omit<PlacementOutcome, 'incidentId'>>): Promise<boolean> {
    return this.change(this.outcomeKey(incidentId), PLACEMENT_OUTCOME_TTL_SECONDS, (text) => {
      const outcome = parse<PlacementOutcome>(PlacementOutcome, text);
      return outcome === null ? undefined : JSON.stringify(PlacementOutcome.parse({ ...outcome, ...change }));
    });
  }

  /** The incident's placement outcome, or null. */
  async outcome(incidentId: string): Promise<PlacementOutcome | null> {
    return parse<PlacementOutcome>(PlacementOutcome, await this.redis.get(this.outcomeKey(incidentId)));
  }

  /** Compare-and-set: `next` gives the new text ('' deletes) or undefined to leave the record as it is. */
  private async change(
    key: string,
    ttlSeconds: number,
    next: (text: string | null) => string | undefined,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < REPLACE_ATTEMPTS; attempt += 1) {
      const text = await this.redis.get(key);
      const written = next(text);
      if (written === undefined) return false;
      const done = await runScript(
        this.redis,
        REPLACE_IF_SAME,
        [key],
        [text ?? '', written, String(ttlSeconds)],
      );
      if (Number(done) === 1) return true;
    }
    throw new Error(`${key} kept changing: gave up after ${REPLACE_ATTEMPTS} attempts`);
  }
}
