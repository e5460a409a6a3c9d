import { Counter, Histogram, type Registry } from 'prom-client';

/** The fencing worker's Prometheus metrics. */
export interface FencingMetrics {
  /**
   * `lifeguard_fencing_total{result}`: fence job outcomes — `succeeded` (fence recorded and host handed
   * to evacuation), `retried` (an attempt failed, another follows), `failed` (given up: host.fencing.failed),
   * `skipped` (the incident was closed).
   */
  fencing: Counter<'result'>;
  /** `lifeguard_fencing_duration_seconds{result}`: time of a fence attempt, from job start to outcome. */
  fencingDuration: Histogram<'result'>;
  /** `lifeguard_power_on_total{result}`: power-on job outcomes (`succeeded`, `skipped`, `retried`, `failed`). */
  powerOn: Counter<'result'>;
  /** `lifeguard_host_down_events_total{outcome}`: intake decisions (`stored`, `duplicate`, `stale`, `closed`, `retried`). */
  intake: Counter<'outcome'>;
}

export function createFencingMetrics(registry: Registry): FencingMetrics {
  return {
    fencing: new Counter({
      name: 'lifeguard_fencing_total',
      help: 'Fence job outcomes by result (succeeded, retried, failed, skipped)',
      labelNames: ['result'],
      registers: [registry],
    }),
    fencingDuration: new Histogram({
      name: 'lifeguard_fencing_duration_seconds',
      help: 'Duration of fence job attempts in seconds, by result',
      labelNames: ['result'],
      buckets: [1, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    powerOn: new Counter({
      name: 'lifeguard_power_on_total',
      help: 'Power-on job outcomes by result (succeeded, skipped, retried, failed)',
      labelNames: ['result'],
      registers: [registry],
    }),
    intake: new Counter({
      name: 'lifeguard_host_down_events_total',
      help: 'host.down events taken in by the fencing worker, by outcome (stored, duplicate, stale, closed, retried)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
