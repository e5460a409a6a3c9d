import { formatAge, formatDuration, formatTime } from '../format.ts';
import { cell, type TableView } from '../table-view.ts';
import {
  type BrokerQueueDepth,
  JOB_STATES,
  type JobQueueDepth,
  type SystemStatus,
  type WorkerKindStatus,
  type WorkerStatus,
} from './system-status.ts';

/**
 * The status tables of `lifeguard status` and the console's queues page, each a view model
 * (TableView) the command renders as text and the console as HTML.
 */

/** Each kind of worker and whether it has a live process: `ok`, `MISSING`, or `unknown`. */
export function workerKindsTable(status: Pick<SystemStatus, 'workerKinds'>): TableView<WorkerKindStatus> {
  return {
    id: 'worker-kinds',
    columns: [{ title: 'kind' }, { title: 'live' }, { title: 'state' }, { title: 'detail' }],
    rows: status.workerKinds.map((kind) => ({
      subject: kind,
      cells: [
        cell(kind.kind),
        cell(kind.live),
        kind.missing === null
          ? cell('unknown', { tone: 'muted' })
          : kind.missing
            ? cell('MISSING', { tone: 'bad' })
            : cell('ok', { tone: 'ok' }),
        cell(kind.detail),
      ],
    })),
  };
}

/** Every registered process, its health server, when it started, and what its `/readyz` answered. */
export function workersTable(status: Pick<SystemStatus, 'workers'>, now: Date): TableView<WorkerStatus> {
  return {
    id: 'workers',
    columns: ['service', 'instance', 'host', 'pid', 'health server', 'started', 'ready'].map((title) => ({
      title,
    })),
    rows: status.workers.map((worker) => ({
      subject: worker,
      cells: [
        cell(worker.service),
        cell(worker.instance),
        cell(worker.host),
        cell(worker.pid),
        cell(`${worker.httpHost}:${worker.httpPort}`),
        cell(formatAge(worker.startedAt, now), { hint: formatTime(worker.startedAt) }),
        cell(worker.readiness, {
          tone: worker.readiness === 'ready' ? 'ok' : worker.readiness === 'not-probed' ? 'muted' : 'bad',
        }),
      ],
    })),
  };
}

/** Each of lifeguard's BullMQ queues with its job count in every state (JOB_STATES). */
export function jobQueuesTable(status: Pick<SystemStatus, 'jobQueues'>): TableView<JobQueueDepth> {
  return {
    id: 'job-queues',
    columns: ['queue', ...JOB_STATES].map((title) => ({ title })),
    rows: status.jobQueues.map((queue) => ({
      subject: queue,
      cells: [cell(queue.queue), ...JOB_STATES.map((state) => cell(queue.counts[state]))],
    })),
  };
}

/** Each of lifeguard's RabbitMQ queues with its ready messages and consumers, or `not declared`. */
export function brokerQueuesTable(queues: ReadonlyArray<BrokerQueueDepth>): TableView<BrokerQueueDepth> {
  return {
    id: 'broker-queues',
    columns: [{ title: 'queue' }, { title: 'ready messages' }, { title: 'consumers' }],
    rows: queues.map((queue) => ({
      subject: queue,
      cells: [
        cell(queue.queue),
        queue.declared ? cell(queue.messages) : cell('not declared', { tone: 'muted' }),
        cell(queue.declared ? queue.consumers : null),
      ],
    })),
  };
}

/**
 * Who leads the node monitors: `monitor-a (fencing token 4, lease <key>, 58.2 s left)`, or why
 * nothing detects failed hosts.
 */
export function leaderText(status: Pick<SystemStatus, 'leader' | 'leaderKey'>): string {
  return status.leader
    ? `${status.leader.holder} (fencing token ${status.leader.token}, lease ${status.leaderKey}, ${formatDuration(status.leader.expiresInMilliseconds)} left)`
    : `none (nobody holds ${status.leaderKey}: no node monitor runs, nothing detects failed hosts)`;
}

/** The warning when kinds of worker have no live process, or null when every kind has one (or is unknown). */
export function missingWorkerKindsText(status: Pick<SystemStatus, 'workerKinds'>): string | null {
  const missing = status.workerKinds.filter((kind) => kind.missing === true).map((kind) => kind.kind);
  return missing.length > 0
    ? `no live process of ${missing.join(', ')}: what they do is not being done`
    : null;
}
