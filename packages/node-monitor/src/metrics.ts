import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The node monitor's Prometheus metrics: InstanceHA's (docs/instance-ha-rules.md#metrics) under the `lifeguard_` prefix. */
export interface NodeMonitorMetrics {
  hostDown: Counter<'host'>;
  hostReachable: Counter<'host'>;
  recoveryRequested: Counter<'host'>;
  thresholdExceeded: Counter;
  aggregateThresholdExceeded: Counter<'aggregate'>;
  pollCycles: Counter<'result'>;
  heartbeatRejected: Counter<'reason'>;
  heartbeatAccepted: Counter<'host'>;
  heartbeatCliff: Counter;
  fencingRateLimited: Counter;
  allServicesStale: Counter;
  /** 1 while the leader's last poll was stopped by the all-services-stale gate (0 on a replica that does not lead). */
  allServicesStaleNow: Gauge;
  admissionBlocked: Counter<'gate'>;
  kdumpPackets: Counter<'result'>;
  servicesSkipped: Counter;
  pollConsecutiveFailures: Gauge;
  hostsProcessing: Gauge;
  leader: Gauge;
  pollDurationSeconds: Histogram;
  redisMemoryLost: Counter;
  incidentsRestored: Counter;
}

/** Hosts and incidents: host.down and re-enable requests published, hosts found reachable, Redis memory lost and incidents restored. */
function hostMetrics(
  registers: Registry[],
): Pick<
  NodeMonitorMetrics,
  'hostDown' | 'hostReachable' | 'recoveryRequested' | 'redisMemoryLost' | 'incidentsRestored'
> {
  return {
    hostDown: new Counter({
      name: 'lifeguard_host_down_total',
      help: 'host.down events published, by host',
      labelNames: ['host'],
      registers,
    }),
    hostReachable: new Counter({
      name: 'lifeguard_host_reachable_total',
      help: 'Failed hosts not fenced because their heartbeat was recent (only nova-compute died)',
      labelNames: ['host'],
      registers,
    }),
    recoveryRequested: new Counter({
      name: 'lifeguard_host_recovery_requested_total',
      help: 'host.recovery.requested events published for re-enable candidates, by host',
      labelNames: ['host'],
      registers,
    }),
    redisMemoryLost: new Counter({
      name: 'lifeguard_redis_memory_lost_total',
      help: 'Times Redis was found to have lost its memory (deployment generation marker missing or replaced)',
      registers,
    }),
    incidentsRestored: new Counter({
      name: 'lifeguard_incidents_restored_total',
      help: "Incidents re-opened from lifeguard's disabled_reason markers after Redis lost its memory",
      registers,
    }),
  };
}

/** The admission gates and their cycles: THRESHOLD, aggregates, heartbeats, the rate limit, all services stale, blocks by gate. */
function gateMetrics(
  registers: Registry[],
): Pick<
  NodeMonitorMetrics,
  | 'thresholdExceeded'
  | 'aggregateThresholdExceeded'
  | 'pollCycles'
  | 'heartbeatRejected'
  | 'heartbeatAccepted'
  | 'heartbeatCliff'
  | 'fencingRateLimited'
  | 'allServicesStale'
  | 'allServicesStaleNow'
  | 'admissionBlocked'
> {
  return {
    thresholdExceeded: new Counter({
      name: 'lifeguard_threshold_exceeded_total',
      help: 'Poll cycles blocked by the global THRESHOLD',
      registers,
    }),
    aggregateThresholdExceeded: new Counter({
      name: 'lifeguard_aggregate_threshold_exceeded_total',
      help: 'Aggregates whose instanceha:max_failures blocked fencing, by aggregate',
      labelNames: ['aggregate'],
      registers,
    }),
    pollCycles: new Counter({
      name: 'lifeguard_poll_cycles_total',
      help: 'Poll cycles by result (success, error)',
      labelNames: ['result'],
      registers,
    }),
    heartbeatRejected: new Counter({
      name: 'lifeguard_heartbeat_rejected_total',
      help: 'Heartbeat datagrams rejected, by reason',
      labelNames: ['reason'],
      registers,
    }),
    heartbeatAccepted: new Counter({
      name: 'lifeguard_heartbeat_accepted_total',
      help: 'Heartbeats accepted from host agents (signed with a known key, fresh, not replayed), by host',
      labelNames: ['host'],
      registers,
    }),
    heartbeatCliff: new Counter({
      name: 'lifeguard_heartbeat_cliff_total',
      help: 'Poll cycles held back by the heartbeat cliff detector (suspected observer partition)',
      registers,
    }),
    fencingRateLimited: new Counter({
      name: 'lifeguard_fencing_rate_limited_total',
      help: 'Poll cycles that deferred failed hosts beyond MAX_HOSTS_PER_CYCLE',
      registers,
    }),
    allServicesStale: new Counter({
      name: 'lifeguard_all_services_stale_total',
      help: 'Poll cycles skipped because every active compute service looked failed',
      registers,
    }),
    allServicesStaleNow: new Gauge({
      name: 'lifeguard_all_services_stale',
      help: "1 while this leader's last poll was skipped because every active compute service looked failed",
      registers,
    }),
    admissionBlocked: new Counter({
      name: 'lifeguard_admission_blocked_total',
      help: 'Failed hosts held back by an admission gate, by gate',
      labelNames: ['gate'],
      registers,
    }),
  };
}

/** The poll itself and the lease: kdump packets, skipped records, consecutive failures, hosts processing, leadership, duration. */
function pollMetrics(
  registers: Registry[],
): Pick<
  NodeMonitorMetrics,
  | 'kdumpPackets'
  | 'servicesSkipped'
  | 'pollConsecutiveFailures'
  | 'hostsProcessing'
  | 'leader'
  | 'pollDurationSeconds'
> {
  return {
    kdumpPackets: new Counter({
      name: 'lifeguard_kdump_packets_total',
      help: 'fence_kdump datagrams by result (accepted, wrong-length, bad-magic, bad-version, unknown-source)',
      labelNames: ['result'],
      registers,
    }),
    servicesSkipped: new Counter({
      name: 'lifeguard_services_skipped_total',
      help: 'Compute service records skipped for missing or invalid fields (e.g. 2.69 partial records)',
      registers,
    }),
    pollConsecutiveFailures: new Gauge({
      name: 'lifeguard_poll_consecutive_failures',
      help: 'Consecutive failed polls of Nova',
      registers,
    }),
    hostsProcessing: new Gauge({
      name: 'lifeguard_hosts_processing',
      help: 'Hosts with an open incident',
      registers,
    }),
    leader: new Gauge({
      name: 'lifeguard_node_monitor_leader',
      help: '1 while this replica holds the leader lease (polls and publishes)',
      registers,
    }),
    pollDurationSeconds: new Histogram({
      name: 'lifeguard_poll_duration_seconds',
      help: 'Duration of one poll cycle, in seconds',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 5, 10, 30, 60, 120, 300],
      registers,
    }),
  };
}

/** Registers the node monitor's metrics in `registry`. */
export function createNodeMonitorMetrics(registry: Registry): NodeMonitorMetrics {
  const registers = [registry];
  return { ...hostMetrics(registers), ...gateMetrics(registers), ...pollMetrics(registers) };
}
