import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';
import { z } from 'zod';
import { MASS_EVENT_GATES, type MassEventHolds, NO_MASS_EVENT_HOLDS } from './mass-event-hold-down-gate.ts';

const StoredHolds = z.record(
  z.string(),
  z.object({
    gate: z.enum(MASS_EVENT_GATES),
    heldSince: z.iso.datetime(),
    clearedAt: z.iso.datetime().nullable(),
  }),
);

/**
 * The mass-event holds the node-monitor leader keeps from one poll to the next, in Redis as JSON
 * (`<prefix>:instance-ha:admission:mass-event-holds`), so that a leader taking over in the middle of
 * a mass outage that ends in waves holds the hosts still coming back as the last leader did
 * (docs/instance-ha-rules.md#mass-event-hold-down).
 */
export class MassEventHoldStore {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
  ) {
    this.key = redisKey(keyPrefix, 'instance-ha', 'admission', 'mass-event-holds');
  }

  /** Keeps `holds` for `ttlSeconds` (none: the record is deleted). */
  async write(holds: MassEventHolds, ttlSeconds: number): Promise<void> {
    if (holds.size === 0) {
      await this.redis.del(this.key);
      return;
    }
    const stored = Object.fromEntries(
      [...holds].map(([host, hold]) => [
        host,
        {
          gate: hold.gate,
          heldSince: hold.heldSince.toISOString(),
          clearedAt: hold.clearedAt?.toISOString() ?? null,
        },
      ]),
    );
    await this.redis.set(this.key, JSON.stringify(stored), 'EX', Math.max(1, Math.ceil(ttlSeconds)));
  }

  /**
   * The holds kept, or none.
   * @throws Error naming the key when what is kept is not a record of holds
   */
  async read(): Promise<MassEventHolds> {
    const text = await this.redis.get(this.key);
    if (text === null) return NO_MASS_EVENT_HOLDS;
    let parsed: z.infer<typeof StoredHolds>;
    try {
      parsed = StoredHolds.parse(JSON.parse(text));
    } catch (error) {
      throw new Error(`${this.key} does not hold mass-event holds: ${(error as Error).message}`);
    }
    return new Map(
      Object.entries(parsed).map(([host, hold]) => [
        host,
        {
          gate: hold.gate,
          heldSince: new Date(hold.heldSince),
          clearedAt: hold.clearedAt === null ? null : new Date(hold.clearedAt),
        },
      ]),
    );
  }
}
