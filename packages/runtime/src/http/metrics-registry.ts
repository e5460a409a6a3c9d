import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * A Prometheus registry for one process with the default Node.js process metrics
 * (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, ...) and a `service` label on every series.
 */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
