/**
 * The simulated cloud's timings that the incident tests share: compute services report every second
 * and count as down after 4 s, servers boot in 1 s, an evacuate is accepted at once and its rebuild
 * takes 1.5 s. Spread into a stack's `cloud` option (`{ kind: 'simulated', ...FAST_CLOUD_TIMINGS }`).
 */
export const FAST_CLOUD_TIMINGS = {
  reportIntervalSeconds: 1,
  serviceDownTimeSeconds: 4,
  bootMilliseconds: 1000,
  evacuationAcceptMilliseconds: 0,
  evacuationRebuildMilliseconds: 1500,
} as const;

/** InstanceHA's POLL (seconds) and DELTA (seconds) that go with FAST_CLOUD_TIMINGS. */
export const FAST_INSTANCE_HA = { POLL: '1', DELTA: '4' } as const;
