// The alert rules, the Prometheus configuration and the Grafana dashboard under deploy/: promtool checks
// and unit-tests the rules; every metric name a rule or a panel reads is one a worker registers; every
// worker kind is scraped at its Compose health port, has its no-live-process alert, and is documented.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { WORKER_KINDS } from '@lifeguard/contracts';
import { parse } from 'yaml';

const root = resolve(import.meta.dirname, '../..');
const prometheusDirectory = join(root, 'deploy', 'prometheus');
const read = (...path: string[]) => readFileSync(join(root, ...path), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules: Rule[] = (
  parse(read('deploy/prometheus/lifeguard.rules.yml')) as { groups: Array<{ rules: Rule[] }> }
).groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(read('deploy/grafana/dashboards/lifeguard.json')) as {
  panels: Array<{
    type: string;
    title: string;
    targets?: Array<{ expr: string }>;
    datasource?: { uid: string };
  }>;
};
const dashboardExpressions = dashboard.panels.flatMap((panel) =>
  (panel.targets ?? []).map((each) => each.expr),
);

function promtool(...args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { cwd: prometheusDirectory, encoding: 'utf8' });
  if (result.error)
    throw new Error(`promtool could not run (Debian package prometheus): ${result.error.message}`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: identifiers that are neither functions nor
 * aggregations (followed by `(`), keywords, label names inside `{...}` or `by (...)`, nor strings.
 */
export function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/(?<![A-Za-z0-9_:])\d[\d.e+-]*[a-z]*/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)) {
    if (match[2] || PROMQL_WORDS.has(match[1]!.toLowerCase())) continue;
    names.add(match[1]!);
  }
  return [...names];
}

/** Files under `directory` (recursively) whose name ends with `suffix`, node_modules and dist left out. */
function sourceFiles(directory: string, suffix: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(directory)) {
    if (name === 'node_modules' || name === 'dist' || name === 'test') continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) found.push(...sourceFiles(path, suffix));
    else if (name.endsWith(suffix)) found.push(path);
  }
  return found;
}

/**
 * The names the workers export: every prom-client metric registered in packages/ (its `name:`), with
 * the series names of histograms; prom-client's default process metrics; BullMQ's queue metrics (the
 * fencing worker appends them); Prometheus's own `up`.
 */
function exportedNames(): Set<string> {
  const names = new Set<string>(['up']);
  for (const file of sourceFiles(join(root, 'packages'), '.ts')) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes("from 'prom-client'")) continue;
    for (const match of text.matchAll(/new (Counter|Gauge|Histogram|Summary)\(\{\s*name: '([a-z0-9_:]+)'/g)) {
      names.add(match[2]!);
      if (match[1] === 'Histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(match[2]! + suffix);
    }
  }
  const defaults = join(root, 'node_modules', 'prom-client', 'lib', 'metrics');
  for (const file of readdirSync(defaults).filter((name) => name.endsWith('.js'))) {
    for (const match of readFileSync(join(defaults, file), 'utf8').matchAll(
      /'((?:nodejs|process)_[a-z0-9_]+)'/g,
    ))
      names.add(match[1]!);
  }
  const bullmq = readFileSync(
    join(root, 'node_modules', 'bullmq', 'dist', 'esm', 'classes', 'queue-getters.js'),
    'utf8',
  );
  for (const match of bullmq.matchAll(/# TYPE (bullmq_[a-z_]+)/g)) names.add(match[1]!);
  return names;
}

describe('alert rules (deploy/prometheus)', () => {
  it('promtool check rules and check config accept them', () => {
    const checked = promtool('check', 'rules', 'lifeguard.rules.yml');
    assert.equal(checked.status, 0, checked.output);
    assert.match(checked.output, new RegExp(`SUCCESS: ${rules.length} rules found`));
    const config = promtool('check', 'config', 'prometheus.yml');
    assert.equal(config.status, 0, config.output);
  });

  it('promtool test rules passes, and every alert is tested firing', () => {
    const tested = promtool('test', 'rules', 'lifeguard.rules.test.yml');
    assert.equal(tested.status, 0, tested.output);
    assert.match(tested.output, /SUCCESS/);
    const tests = (
      parse(readFileSync(join(prometheusDirectory, 'lifeguard.rules.test.yml'), 'utf8')) as {
        tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
      }
    ).tests.flatMap((each) => each.alert_rule_test);
    for (const alert of new Set(rules.map((rule) => rule.alert))) {
      assert.ok(
        tests.some((each) => each.alertname === alert && each.exp_alerts.length > 0),
        `${alert} has a test where it fires`,
      );
      assert.ok(
        tests.some((each) => each.alertname === alert && each.exp_alerts.length === 0),
        `${alert} has a test where it stays quiet`,
      );
    }
  });

  it('cover what an operator must be woken for, each with a runbook section in docs/alerts.md', () => {
    const alerts = new Set(rules.map((rule) => rule.alert));
    for (const wanted of [
      'LifeguardFencingFailed',
      'LifeguardFencingAwaitingOperator',
      'LifeguardEvacuationFailed',
      'LifeguardThresholdExceeded',
      'LifeguardNoNodeMonitorLeader',
      'LifeguardWorkerKindDown',
      'LifeguardDeadLettersGrowing',
      'LifeguardProvisioningOutboxLag',
      'LifeguardNovaUnreachable',
      'LifeguardRedisRefusesWrites',
    ])
      assert.ok(alerts.has(wanted), wanted);
    const docs = read('docs/alerts.md');
    for (const rule of rules) {
      const anchor = rule.annotations?.runbook?.split('#')[1];
      assert.equal(rule.annotations?.runbook, `docs/alerts.md#${rule.alert.toLowerCase()}`);
      assert.match(
        docs,
        new RegExp(`^### ${rule.alert}$`, 'm'),
        `docs/alerts.md has a section for ${anchor}`,
      );
    }
  });

  it('a worker kind with no live process: one rule per kind, on the scrape job of that kind', () => {
    const kinds = rules
      .filter((rule) => rule.alert === 'LifeguardWorkerKindDown')
      .map((rule) => {
        assert.equal(rule.expr, `absent(up{job="${rule.labels?.kind}"} == 1)`);
        return rule.labels?.kind;
      });
    assert.deepEqual([...kinds].sort(), [...WORKER_KINDS].sort());
  });
});

describe('the Prometheus configuration and the Compose profile observability', () => {
  it('scrapes every worker kind at the health port its Compose service listens on', () => {
    const config = parse(read('deploy/prometheus/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ names: string[]; port: number }> }>;
    };
    const compose = parse(read('docker-compose.yml'), { merge: true }) as {
      services: Record<
        string,
        { environment?: Record<string, string>; profiles?: string[]; volumes?: string[] }
      >;
    };
    assert.deepEqual(config.rule_files, ['lifeguard.rules.yml']);
    assert.deepEqual(config.scrape_configs.map((each) => each.job_name).sort(), [...WORKER_KINDS].sort());
    for (const job of config.scrape_configs) {
      const [target] = job.dns_sd_configs;
      assert.deepEqual(target?.names, [job.job_name], 'the Compose service of the same name');
      assert.equal(String(target?.port), compose.services[job.job_name]?.environment?.LIFEGUARD_HTTP_PORT);
    }
    for (const service of ['prometheus', 'grafana']) {
      assert.deepEqual(compose.services[service]?.profiles, ['observability']);
    }
    assert.ok(compose.services.prometheus?.volumes?.includes('./deploy/prometheus:/etc/prometheus:ro'));
    assert.ok(
      compose.services.grafana?.volumes?.includes(
        './deploy/grafana/provisioning:/etc/grafana/provisioning:ro',
      ),
    );
    assert.ok(
      compose.services.grafana?.volumes?.includes(
        './deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro',
      ),
    );
  });
});

describe('the Grafana dashboard (deploy/grafana)', () => {
  it('reads its panels from the provisioned Prometheus data source', () => {
    const datasource = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: Array<{ uid: string; url: string }>;
    };
    assert.equal(datasource.datasources[0]?.url, 'http://prometheus:9090');
    const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
    assert.ok(panels.length >= 20, `${panels.length} panels`);
    for (const panel of panels) {
      assert.equal(panel.datasource?.uid, datasource.datasources[0]?.uid, panel.title);
      assert.ok((panel.targets ?? []).length > 0, `${panel.title} has a query`);
    }
  });

  it('every metric name a rule or a panel reads is one a worker exports', () => {
    const exported = exportedNames();
    assert.ok(
      exported.has('lifeguard_fencing_awaiting_operator') && exported.has('nodejs_eventloop_lag_p99_seconds'),
    );
    const used = new Map<string, string>();
    for (const rule of rules) for (const name of metricNames(rule.expr)) used.set(name, `rule ${rule.alert}`);
    for (const expression of dashboardExpressions)
      for (const name of metricNames(expression)) used.set(name, `dashboard: ${expression}`);
    assert.ok(used.size >= 30, `${used.size} names used`);
    const unknown = [...used].filter(([name]) => !exported.has(name));
    assert.deepEqual(unknown, [], 'names no worker exports');
  });

  it('the name parser finds metric names and nothing else', () => {
    assert.deepEqual(
      metricNames(
        'histogram_quantile(0.95, sum by (le, method) (rate(lifeguard_x_bucket{method="update_device_up"}[5m]))) or absent(up{job="a"} == 1)',
      ),
      ['lifeguard_x_bucket', 'up'],
    );
    assert.deepEqual(metricNames('max(a) < 1 or on (job) b unless ignoring(x) c offset 5m'), ['a', 'b', 'c']);
  });
});
