import type { EvacuateInstanceJobData } from '@lifeguard/contracts';
import { ActionClaims, type ClaimAnswer, type RedisClient, redisKey } from '@lifeguard/runtime';

/**
 * The evacuate claims of instances (ActionClaims): key `<prefix>:evacuation:evacuate-claim:<incident
 * id>:<instance id>`, held by one run of the instance's job (its BullMQ lock token) for
 * `lifetimeMilliseconds` (LIFEGUARD_EVACUATE_CLAIM_SECONDS) from its last take, named after this
 * process in logs. What an answer allows is evacuateClaimVerdict's.
 */
export class EvacuateClaims {
  private readonly claims: ActionClaims;

  constructor(
    redis: RedisClient,
    private readonly keyPrefix: string,
    private readonly lifetimeMilliseconds: number,
    private readonly processName: string,
  ) {
    this.claims = new ActionClaims(redis);
  }

  key(data: Pick<EvacuateInstanceJobData, 'incidentId' | 'instanceId'>): string {
    return redisKey(this.keyPrefix, 'evacuation', 'evacuate-claim', data.incidentId, data.instanceId);
  }

  /** Takes (or extends) the instance's claim for the run `token`. */
  take(
    data: Pick<EvacuateInstanceJobData, 'incidentId' | 'instanceId'>,
    token: string,
  ): Promise<ClaimAnswer> {
    return this.claims.take(this.key(data), { token, name: this.processName }, this.lifetimeMilliseconds);
  }

  /** Releases the instance's claim if the run `token` holds it. */
  async release(
    data: Pick<EvacuateInstanceJobData, 'incidentId' | 'instanceId'>,
    token: string,
  ): Promise<void> {
    await this.claims.release(this.key(data), token);
  }
}
