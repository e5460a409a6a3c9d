import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { CliError } from '../errors.ts';
import { formatAge, formatDuration, formatTime } from '../output/format.ts';
import { renderTable } from '../output/table.ts';
import { reenableWaitViews, renderReenableWaits } from '../queries/reenable-waits.ts';
import { JOB_STATES, type SystemStatus, systemStatus } from '../queries/system-status.ts';
import { incidentFenceText } from './incidents.ts';

function workersSection(status: SystemStatus, now: Date): string[] {
  return [
    `Workers (${status.workers.length} up)`,
    status.workers.length === 0
      ? 'no lifeguard process is registered (start the workers: npm start)'
      : renderTable(
          ['service', 'instance', 'host', 'pid', 'health server', 'started', 'ready'],
          status.workers.map((worker) => [
            worker.service,
            worker.instance,
            worker.host,
            worker.pid,
            `${worker.httpHost}:${worker.httpPort}`,
            formatAge(worker.startedAt, now),
            worker.readiness,
          ]),
        ),
  ];
}

function workerKindsSection(status: SystemStatus): string[] {
  const missing = status.workerKinds.filter((kind) => kind.missing === true).map((kind) => kind.kind);
  return [
    'Worker kinds',
    renderTable(
      ['kind', 'live', 'state', 'detail'],
      status.workerKinds.map((kind) => [
        kind.kind,
        kind.live ?? '-',
        kind.missing === null ? 'unknown' : kind.missing ? 'MISSING' : 'ok',
        kind.detail,
      ]),
    ),
    ...(missing.length > 0
      ? [`⚠ no live process of ${missing.join(', ')}: what they do is not being done`]
      : []),
  ];
}

function leaderSection(status: SystemStatus): string[] {
  return [
    status.leader
      ? `Node monitor leader: ${status.leader.holder} (fencing token ${status.leader.token}, lease ${status.leaderKey}, ${formatDuration(status.leader.expiresInMilliseconds)} left)`
      : `Node monitor leader: none (nobody holds ${status.leaderKey}: no node monitor runs, nothing detects failed hosts)`,
  ];
}

function queuesSections(status: SystemStatus): string[] {
  return [
    'Job queues (BullMQ)',
    renderTable(
      ['queue', ...JOB_STATES],
      status.jobQueues.map((queue) => [queue.queue, ...JOB_STATES.map((state) => queue.counts[state])]),
    ),
    '',
    'RabbitMQ queues',
    status.brokerQueues === null
      ? `unknown: ${status.brokerError ?? 'RabbitMQ could not be read'}`
      : renderTable(
          ['queue', 'ready messages', 'consumers'],
          status.brokerQueues.map((queue) => [
            queue.queue,
            queue.declared ? queue.messages : 'not declared',
            queue.declared ? queue.consumers : '-',
          ]),
        ),
  ];
}

function openIncidentsSection(status: SystemStatus, now: Date): string[] {
  return [
    `Open incidents (${status.openIncidents.length})`,
    status.openIncidents.length === 0
      ? 'none'
      : renderTable(
          ['incident', 'host', 'state', 'opened', 'fence'],
          status.openIncidents.map((incident) => [
            incident.id,
            incident.host,
            incident.state,
            `${formatTime(incident.openedAt)} (${formatAge(incident.openedAt, now)})`,
            incidentFenceText(incident),
          ]),
        ),
  ];
}

/** The human form of `lifeguard status`: its sections, each followed by a blank line but the last. */
export function renderStatus(status: SystemStatus, now: Date = new Date()): string {
  return [
    ...workersSection(status, now),
    '',
    ...workerKindsSection(status),
    '',
    ...leaderSection(status),
    '',
    ...queuesSections(status),
    '',
    ...openIncidentsSection(status, now),
  ].join('\n');
}

/** `lifeguard status`: workers up, the node monitor leader, queue depths, open incidents. */
export function registerStatusCommand(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('status')
    .description('workers up, node-monitor leader, BullMQ and RabbitMQ queue depths, open incidents')
    .option('--json', 'print JSON instead of tables')
    .action(async (options) => {
      const cli = context();
      // Redis holds nearly everything shown: without it the command stops. Without RabbitMQ the rest
      // is still shown, and the command then fails (exit 1) naming RabbitMQ.
      const amqp = cli.amqp();
      amqp.catch(() => undefined);
      const [redis, incidents] = await Promise.all([cli.redis(), cli.incidents()]);
      const status = await systemStatus({
        redis,
        amqp,
        keyPrefix: cli.keyPrefix,
        openIncidents: () => incidents.listOpen(),
      });
      const waits = await reenableWaitViews(redis, cli.keyPrefix);
      if (options.json) cli.printJson({ ...status, reenableWaits: [...waits.values()] });
      else cli.print([renderStatus(status), renderReenableWaits(waits)].filter(Boolean).join('\n\n'));
      if (status.brokerError !== null) throw new CliError(status.brokerError);
    });
}
