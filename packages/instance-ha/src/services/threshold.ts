import { categoriseServices, type ServiceView } from './categorise.ts';
import { suspectServices } from './suspect-services.ts';

export interface ThresholdInput {
  /** Every valid nova-compute service of this cycle (disabled ones included). */
  readonly services: ReadonlyArray<ServiceView>;
  /** This cycle's failed hosts that survived the gates before G6 (Nova may still say up). */
  readonly survivors: ReadonlyArray<string>;
  /**
   * Silent hosts not failed yet (see suspectServices): impacted, never admitted. Empty reproduces
   * InstanceHA's formula exactly.
   */
  readonly suspects?: ReadonlyArray<string>;
  /** THRESHOLD, percent. */
  readonly thresholdPercent: number;
  /**
   * With TAGGED_AGGREGATES and a successful aggregate list: the hosts of evacuable aggregates, which
   * restrict numerator and denominator. null otherwise (all services count).
   */
  readonly evacuableAggregateHosts: ReadonlySet<string> | null;
}

export interface ThresholdResult {
  /** True when `percent > threshold` (strictly): nothing is admitted this cycle. */
  readonly blocked: boolean;
  readonly impacted: number;
  readonly total: number;
  readonly percent: number;
  readonly impactedHosts: ReadonlyArray<string>;
}

/**
 * Gate G6, THRESHOLD, exactly as InstanceHA HEAD (docs/instance-ha-rules.md#threshold): impacted = distinct hosts among all
 * nova-compute services that are `state == down` or `forced_down` (earlier incidents still forced down
 * count: cascade protection; disabled hosts count too), united with this cycle's surviving failures;
 * total = every nova-compute service, disabled ones included. With TAGGED_AGGREGATES both are
 * restricted to hosts in evacuable aggregates. Blocks when impacted ÷ total × 100 > THRESHOLD.
 * lifeguard also counts the silent hosts of `suspects` as impacted, so a partition whose hosts cross
 * DELTA over several polls is blocked on its first poll (see suspectServices).
 * Examples (docs/instance-ha-rules.md#threshold): 4 services, 2 failed = 50 % → allowed; 3 with 2 = 66.7 % → blocked;
 * 40 with 20 = 50 % → allowed (THRESHOLD 50).
 */
export function evaluateThreshold(input: ThresholdInput): ThresholdResult {
  const counted = input.evacuableAggregateHosts
    ? input.services.filter((service) => input.evacuableAggregateHosts!.has(service.host))
    : input.services;
  const impacted = new Set<string>();
  for (const service of counted) {
    if (service.state === 'down' || service.forcedDown) impacted.add(service.host);
  }
  for (const host of [...input.survivors, ...(input.suspects ?? [])]) {
    if (!input.evacuableAggregateHosts || input.evacuableAggregateHosts.has(host)) impacted.add(host);
  }
  return thresholdResult(impacted, counted.length, input.thresholdPercent);
}

/**
 * THRESHOLD over a count: `percent` = impacted ÷ total × 100 (0 when nothing is counted), blocked
 * when it is strictly greater than THRESHOLD (docs/instance-ha-rules.md#threshold). The one place
 * that compares with THRESHOLD, for the cycle's count and an action's.
 * @param thresholdPercent THRESHOLD, percent
 */
export function thresholdResult(
  impacted: ReadonlySet<string>,
  total: number,
  thresholdPercent: number,
): ThresholdResult {
  const percent = total === 0 ? 0 : (impacted.size / total) * 100;
  return {
    blocked: percent > thresholdPercent,
    impacted: impacted.size,
    total,
    percent,
    impactedHosts: [...impacted],
  };
}

/**
 * THRESHOLD over a fresh `os-services` listing, as the evacuation worker re-checks it right before
 * evacuating: impacted = hosts down or forced down, hosts older than DELTA, and silent hosts older
 * than THRESHOLD_SUSPECT_AGE (the same rule the node monitor applies at admission, see
 * evaluateThreshold and suspectServices); records that cannot be read are left out of both sides.
 *
 * @param records the raw `GET /os-services?binary=nova-compute` records
 * @param evacuableAggregateHosts hosts of evacuable aggregates (TAGGED_AGGREGATES), or null for all
 */
export function thresholdOfServiceListing(
  records: ReadonlyArray<unknown>,
  config: { deltaSeconds: number; thresholdSuspectAgeSeconds: number; thresholdPercent: number },
  evacuableAggregateHosts: ReadonlySet<string> | null,
  now: Date = new Date(),
): ThresholdResult {
  const categorisation = categoriseServices(records, {
    now,
    deltaSeconds: config.deltaSeconds,
    openIncidents: new Map(),
  });
  const failed = categorisation.freshFailures.map((failure) => failure.service.host);
  return evaluateThreshold({
    services: categorisation.services,
    survivors: failed,
    suspects: suspectServices(categorisation.services, new Set(failed), config.thresholdSuspectAgeSeconds),
    thresholdPercent: config.thresholdPercent,
    evacuableAggregateHosts,
  });
}
