import type { RedisClient } from '@lifeguard/runtime';
import { redisKey } from '@lifeguard/runtime';

/** How long a stop flag is kept, in seconds (7 days: longer than any evacuation). */
export const STOP_FLAG_SECONDS = 7 * 24 * 3600;

/**
 * "This host's evacuation stopped": set by the first instance that fails in SMART_EVACUATION or
 * ORCHESTRATED_RESTART mode, read by every other instance job of the same incident (in any worker
 * process) before it sends its first evacuate, so the rest of the host is left alone for a person
 * (docs/instance-ha-rules.md#smart_evacuation). Key `<prefix>:evacuation:stopped:<incident id>`, value
 * the reason; the first reason wins.
 */
export class StopFlags {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  private key(incidentId: string): string {
    return redisKey(this.keyPrefix, 'evacuation', 'stopped', incidentId);
  }

  /** Marks the incident's evacuation stopped (keeps an earlier reason). */
  async stop(incidentId: string, reason: string): Promise<void> {
    await this.redis.set(this.key(incidentId), reason.slice(0, 1000), 'EX', STOP_FLAG_SECONDS, 'NX');
  }

  /** The reason the incident's evacuation stopped, or null while it goes on. */
  async reason(incidentId: string): Promise<string | null> {
    return this.redis.get(this.key(incidentId));
  }

  async isStopped(incidentId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(incidentId))) === 1;
  }
}
