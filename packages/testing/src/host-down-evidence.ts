import type { HostDownEvidence } from '@lifeguard/contracts';

/**
 * The evidence the node monitor records for a failed compute service, as tests open incidents with:
 * Nova reported the service `down` and `enabled`, not forced down, with no `updated_at` (so no age in
 * seconds), no disabled reason and no availability zone. `overrides` replace any of those fields.
 */
export function hostDownEvidence(
  serviceId: string,
  overrides: Partial<HostDownEvidence> = {},
): HostDownEvidence {
  return {
    serviceId,
    state: 'down',
    status: 'enabled',
    forcedDown: false,
    updatedAt: null,
    ageSeconds: null,
    disabledReason: null,
    zone: null,
    ...overrides,
  };
}
