/** The per-aggregate `instanceha:max_failures` rule lives in instance-ha, shared with the workers' re-checks. */
export {
  AGGREGATE_MAX_FAILURES_KEY,
  type AggregateLimitResult,
  type AggregateTrip,
  evaluateAggregateLimits,
} from '@lifeguard/instance-ha';
