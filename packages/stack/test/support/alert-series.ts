import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_REPOSITORY_ROOT } from '../../src/index.ts';

/** A series an alert rule reads through `increase(name{label="value", ...}[...])`. */
export interface AlertedSeries {
  readonly alert: string;
  readonly metric: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Every `increase()` of a counter with label values in deploy/prometheus/lifeguard.rules.yml, by alert. */
export function alertedCounterSeries(): AlertedSeries[] {
  const text = readFileSync(
    join(PACKAGE_REPOSITORY_ROOT, 'deploy', 'prometheus', 'lifeguard.rules.yml'),
    'utf8',
  );
  const found: AlertedSeries[] = [];
  let alert = '';
  for (const line of text.split('\n')) {
    alert = /^\s*- alert: (\S+)/.exec(line)?.[1] ?? alert;
    for (const match of line.matchAll(/increase\(([a-z_:]+)\{([^}]*)\}/g)) {
      const labels = Object.fromEntries(
        [...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1]!, pair[2]!]),
      );
      found.push({ alert, metric: match[1]!, labels });
    }
  }
  return found;
}

/** The values of `series` in a Prometheus text exposition (one per matching label set). */
export function seriesValues(exposition: string, series: AlertedSeries): number[] {
  const values: number[] = [];
  for (const line of exposition.split('\n')) {
    const sample = /^([a-z_:]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!sample || sample[1] !== series.metric) continue;
    const labels = Object.fromEntries(
      [...sample[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1]!, pair[2]!]),
    );
    if (Object.entries(series.labels).every(([name, value]) => labels[name] === value))
      values.push(Number(sample[3]));
  }
  return values;
}
