import { ACTION_GATES } from '@lifeguard/instance-ha';
import { exportAtZero } from '@lifeguard/runtime';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { JOB_ERROR_KINDS } from './job-errors.ts';

/** Results counted by `lifeguard_fencing_total`. */
export const FENCING_RESULTS = [
  'succeeded',
  'retried',
  'failed',
  'skipped',
  'deferred',
  'recovered',
] as const;

/** The fencing worker's Prometheus metrics. */
export interface FencingMetrics {
  /**
   * `lifeguard_fencing_total{result}`: fence job outcomes — `succeeded` (fence recorded and host handed
   * to evacuation), `retried` (an attempt failed, another follows), `failed` (given up: host.fencing.failed),
   * `skipped` (the incident was closed).
   */
  fencing: Counter<'result'>;
  /**
   * `lifeguard_fence_attempt_failures_total{kind}`: failed fence attempts (retried or final) by the
   * kind classifyJobError gives — `not-confirmed` when the agent or BMC took the power-off but the power
   * was never read back as off (an agent that reports success while the BMC still says on),
   * `unreachable` for a device that did not answer or an agent that hung past its timeout, `nova`,
   * `nova-unreachable`, ... (docs/alerts.md#lifeguardfencepoweroffnotconfirmed).
   */
  fenceAttemptFailures: Counter<'kind'>;
  /** `lifeguard_fencing_duration_seconds{result}`: time of a fence attempt, from job start to outcome. */
  fencingDuration: Histogram<'result'>;
  /** `lifeguard_power_on_total{result}`: power-on job outcomes (`succeeded`, `skipped`, `retried`, `failed`). */
  powerOn: Counter<'result'>;
  /** `lifeguard_host_down_events_total{outcome}`: intake decisions (`stored`, `duplicate`, `stale`, `closed`, `retried`). */
  intake: Counter<'outcome'>;
  /**
   * `lifeguard_fencing_awaiting_operator`: failed fence jobs of open incidents that nothing retries by
   * itself (failed for good, or LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS is 0): each host waits
   * for a person (`lifeguard host confirm-fenced`, or a fix and a retry). Counted at every
   * reconciliation pass (LIFEGUARD_FENCING_RECONCILE_SECONDS).
   */
  awaitingOperator: Gauge;
  /**
   * `lifeguard_fence_refused_total{reason}`: fences refused on a blank memory — `redis-memory-lost`
   * (the deployment generation marker is gone or its rebuild from Nova has not finished) or
   * `no-incident` (Redis holds no record of the admission the job acts on). The host is re-admitted
   * through the node monitor's gates on a later poll (docs/failure-modes.md#redis-restarted-empty).
   */
  fenceRefused: Counter<'reason'>;
  /**
   * `lifeguard_fence_deferred_total{gate}`: fences held back by a gate that can change (`threshold`,
   * `aggregate-max-failures`, `disabled`, `capacity`, ...); each deferral looks again after POLL
   * (docs/alerts.md#lifeguardnoroomtoevacuate).
   */
  fenceDeferred: Counter<'gate'>;
}

/**
 * Registers the metrics. Every result, failure kind and deferring gate is exported at 0 from start-up,
 * so that the first failed fence after a start is a rise the alerts' `increase()` sees (docs/alerts.md).
 */
export function createFencingMetrics(registry: Registry): FencingMetrics {
  const metrics: FencingMetrics = {
    fencing: new Counter({
      name: 'lifeguard_fencing_total',
      help: 'Fence job outcomes by result (succeeded, retried, failed, skipped, deferred, recovered)',
      labelNames: ['result'],
      registers: [registry],
    }),
    fenceAttemptFailures: new Counter({
      name: 'lifeguard_fence_attempt_failures_total',
      help: 'Failed fence attempts by kind (not-confirmed, unreachable, credentials, refused, agent-failed, nova, ...)',
      labelNames: ['kind'],
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
    fenceRefused: new Counter({
      name: 'lifeguard_fence_refused_total',
      help: 'Fences refused on a blank memory, by reason (redis-memory-lost, no-incident)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    fenceDeferred: new Counter({
      name: 'lifeguard_fence_deferred_total',
      help: 'Fences held back by a gate that can change, by gate (threshold, aggregate-max-failures, disabled, capacity, ...)',
      labelNames: ['gate'],
      registers: [registry],
    }),
    awaitingOperator: new Gauge({
      name: 'lifeguard_fencing_awaiting_operator',
      help: 'Failed fence jobs of open incidents that wait for an operator (confirm-fenced, or a fix and a retry)',
      registers: [registry],
    }),
  };
  exportAtZero(metrics.fencing, 'result', FENCING_RESULTS);
  exportAtZero(metrics.fenceAttemptFailures, 'kind', JOB_ERROR_KINDS);
  // The gates a fence re-checks before it acts, and the capacity judgement after them.
  exportAtZero(metrics.fenceDeferred, 'gate', [...ACTION_GATES.map((gate) => gate.name), 'capacity']);
  return metrics;
}

/**
 * Merges Prometheus text from several sources (BullMQ's `exportPrometheusMetrics` of each queue) so
 * that every metric name appears once with one HELP and one TYPE line and all its samples together,
 * as the exposition format requires.
 */
export function mergePrometheusText(texts: ReadonlyArray<string>): string {
  const families = new Map<string, { help: string | null; type: string | null; samples: string[] }>();
  const family = (name: string) => {
    let found = families.get(name);
    if (!found) {
      found = { help: null, type: null, samples: [] };
      families.set(name, found);
    }
    return found;
  };
  for (const text of texts) {
    for (const line of text.split('\n')) {
      const comment = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (comment) {
        const entry = family(comment[2]!);
        if (comment[1] === 'HELP') entry.help ??= line;
        else entry.type ??= line;
        continue;
      }
      const name = /^([A-Za-z_:][A-Za-z0-9_:]*)/.exec(line)?.[1];
      if (name) family(name).samples.push(line);
    }
  }
  return [...families.values()]
    .flatMap((entry) =>
      [entry.help, entry.type, ...entry.samples].filter((line): line is string => line !== null),
    )
    .join('\n');
}
