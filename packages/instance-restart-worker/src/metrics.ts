import { exportAtZero } from '@lifeguard/runtime';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Outcomes counted by `lifeguard_instance_restart_total` (the job's InstanceRestartOutcome). */
export const RESTART_OUTCOMES = ['restarted', 'ignored', 'given-up', 'failed'] as const;

/** The instance restart worker's Prometheus metrics. */
export interface InstanceRestartMetrics {
  /** `lifeguard_instance_restart_total{outcome}`: one per finished job. */
  readonly outcomes: Counter<'outcome'>;
  /** `lifeguard_instance_restart_given_up_total`: instances left for a person after too many restarts (alerted on). */
  readonly givenUp: Counter;
  /** `lifeguard_instance_restart_seconds`: from the failure's observation to the guest ACTIVE again. */
  readonly duration: Histogram;
  /** `lifeguard_instance_restart_nova_calls_total{action}`: reset-state, stop and start calls sent. */
  readonly novaCalls: Counter<'action'>;
}

/** Registers the metrics; every outcome is exported at 0 from start-up so the first one is a rise. */
export function createInstanceRestartMetrics(registry: Registry): InstanceRestartMetrics {
  const metrics: InstanceRestartMetrics = {
    outcomes: new Counter({
      name: 'lifeguard_instance_restart_total',
      help: 'Instance restart jobs by outcome (restarted, ignored, given-up, failed)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    givenUp: new Counter({
      name: 'lifeguard_instance_restart_given_up_total',
      help: 'Instances not restarted because they were restarted too often within the hour (left for a person)',
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'lifeguard_instance_restart_seconds',
      help: 'Seconds from an instance failure being observed to the guest ACTIVE again',
      buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers: [registry],
    }),
    novaCalls: new Counter({
      name: 'lifeguard_instance_restart_nova_calls_total',
      help: 'Nova calls made to restart instances, by action (reset-state, stop, start)',
      labelNames: ['action'],
      registers: [registry],
    }),
  };
  exportAtZero(metrics.outcomes, 'outcome', RESTART_OUTCOMES);
  metrics.givenUp.inc(0);
  return metrics;
}
