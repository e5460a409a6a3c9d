import { type Counter, collectDefaultMetrics, Registry } from 'prom-client';

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

/**
 * Exports `counter`'s series for each of `values` of `label` at 0 (with `fixed` labels besides), so
 * that the first event after start-up is a rise from 0 that `increase()` and `rate()` see: a series
 * born at its first increment has no earlier sample, and an alert on its increase never fires for it.
 */
export function exportAtZero<Label extends string>(
  counter: Counter<Label>,
  label: NoInfer<Label>,
  values: ReadonlyArray<string>,
  fixed: Partial<Record<NoInfer<Label>, string>> = {},
): void {
  for (const value of values) counter.inc({ ...fixed, [label]: value } as Partial<Record<Label, string>>, 0);
}
