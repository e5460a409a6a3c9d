import { exportAtZero } from '@lifeguard/runtime';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Results counted by `lifeguard_instance_evacuation_total`. */
export const INSTANCE_RESULTS = ['succeeded', 'failed', 'skipped', 'deleted'] as const;
export type InstanceResult = (typeof INSTANCE_RESULTS)[number];
/** Results counted by `lifeguard_host_evacuation_total`. */
export const HOST_RESULTS = ['evacuated', 'nothing_to_evacuate', 'failed', 'refused'] as const;
export type HostResult = (typeof HOST_RESULTS)[number];

const DURATION_BUCKETS_SECONDS = [1, 2, 5, 10, 30, 60, 120, 180, 300, 600, 1800, 3600];

/** The evacuation worker's Prometheus metrics. */
export interface EvacuationMetrics {
  /** `lifeguard_instance_evacuation_total{result}`. */
  readonly instances: Counter<'result'>;
  /** `lifeguard_instance_evacuation_duration_seconds{result}`: from the job's first start to its outcome. */
  readonly instanceDuration: Histogram<'result'>;
  /** `lifeguard_evacuate_requests_total{result}`: evacuate calls, accepted or refused by Nova. */
  readonly evacuateRequests: Counter<'result'>;
  /** `lifeguard_host_evacuation_total{result}`. */
  readonly hosts: Counter<'result'>;
  /** `lifeguard_host_evacuation_duration_seconds{result}`: from the host job's first start to its outcome. */
  readonly hostDuration: Histogram<'result'>;
  /** `lifeguard_hosts_evacuating`: host evacuations not finished, across every worker process. */
  readonly hostsInProgress: Gauge;
  /**
   * `lifeguard_hosts_waiting_for_nova_compute_restart`: hosts whose `forced_down` Nova has refused to
   * lift for at least LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS (all worker processes).
   */
  readonly hostsWaitingForNovaComputeRestart: Gauge;
  /** `lifeguard_host_reenabled_total`. */
  readonly reenabled: Counter;
  /** `lifeguard_host_reenable_checks_total{outcome}`: re-enable checks and what they concluded. */
  readonly reenableChecks: Counter<'outcome'>;
}

/** What the global gauges count at every scrape (from Redis, so every process reports the same figure). */
export interface GlobalCounts {
  /** The BullMQ queue's unfinished host jobs. */
  hostsInProgress(): Promise<number>;
  /** Hosts waiting past LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS for their nova-compute to restart. */
  hostsWaitingForNovaComputeRestart(): Promise<number>;
}

/**
 * Registers the metrics. The gauges ask `counts` at every scrape, so every process reports the same
 * global figure; while Redis cannot be read they keep their last value (readiness reports the outage).
 * Every instance and host result is exported at 0 from start-up, so that the first failure after a
 * start is a rise the alerts' `increase()` sees.
 */
export function createEvacuationMetrics(registry: Registry, counts: GlobalCounts): EvacuationMetrics {
  const metrics: EvacuationMetrics = {
    instances: new Counter({
      name: 'lifeguard_instance_evacuation_total',
      help: 'Instance evacuations by result (succeeded, failed, skipped after the host stopped, deleted)',
      labelNames: ['result'],
      registers: [registry],
    }),
    instanceDuration: new Histogram({
      name: 'lifeguard_instance_evacuation_duration_seconds',
      help: 'Seconds from the start of an instance evacuation to its outcome',
      labelNames: ['result'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: [registry],
    }),
    evacuateRequests: new Counter({
      name: 'lifeguard_evacuate_requests_total',
      help: 'Evacuate requests sent to Nova, by result (accepted, refused)',
      labelNames: ['result'],
      registers: [registry],
    }),
    hosts: new Counter({
      name: 'lifeguard_host_evacuation_total',
      help: 'Host evacuations by result (evacuated, nothing_to_evacuate, failed, refused)',
      labelNames: ['result'],
      registers: [registry],
    }),
    hostDuration: new Histogram({
      name: 'lifeguard_host_evacuation_duration_seconds',
      help: 'Seconds from the start of a host evacuation to its outcome',
      labelNames: ['result'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers: [registry],
    }),
    hostsInProgress: new Gauge({
      name: 'lifeguard_hosts_evacuating',
      help: 'Host evacuations in progress (all worker processes)',
      registers: [registry],
      async collect() {
        try {
          this.set(await counts.hostsInProgress());
        } catch {
          // Redis unreachable: keep the last value; readiness reports the outage.
        }
      },
    }),
    hostsWaitingForNovaComputeRestart: new Gauge({
      name: 'lifeguard_hosts_waiting_for_nova_compute_restart',
      help: 'Hosts whose forced_down Nova has refused to lift for LIFEGUARD_REENABLE_WAITING_ALERT_SECONDS or more (done evacuation migrations remain until their nova-compute restarts)',
      registers: [registry],
      async collect() {
        try {
          this.set(await counts.hostsWaitingForNovaComputeRestart());
        } catch {
          // Redis unreachable: keep the last value.
        }
      },
    }),
    reenabled: new Counter({
      name: 'lifeguard_host_reenabled_total',
      help: 'Compute services enabled again after their evacuation',
      registers: [registry],
    }),
    reenableChecks: new Counter({
      name: 'lifeguard_host_reenable_checks_total',
      help: 'Re-enable checks by outcome (reenabled, waiting, left-alone)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
  exportAtZero(metrics.instances, 'result', INSTANCE_RESULTS);
  exportAtZero(metrics.hosts, 'result', HOST_RESULTS);
  return metrics;
}
