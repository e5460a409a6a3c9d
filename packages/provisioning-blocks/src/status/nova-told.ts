import type { RedisClient } from '@lifeguard/runtime';
import type { ProvisioningKeys } from '../store/provisioning-keys.ts';

/** How long the mark of an event Nova was told of is kept: far longer than any redelivery takes. */
export const NOVA_TOLD_MARK_SECONDS = 24 * 3600;

/** Which port events Nova has been told of, by event id (the notifier's guard against telling twice). */
export interface NovaTold {
  wasTold(eventId: string): Promise<boolean>;
  recordTold(eventId: string): Promise<void>;
}

/**
 * NovaTold in Redis: one key per event id with a day's time to live. Every publication of one port
 * transition carries the same event id (docs/design.md#event-ids), so a redelivery and a republish
 * alike find the mark.
 */
export class RedisNovaTold implements NovaTold {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ProvisioningKeys,
  ) {}

  async wasTold(eventId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.novaTold(eventId))) === 1;
  }

  async recordTold(eventId: string): Promise<void> {
    await this.redis.set(this.keys.novaTold(eventId), '1', 'EX', NOVA_TOLD_MARK_SECONDS);
  }
}
