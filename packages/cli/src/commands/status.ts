import {
  admissionLines,
  brokerQueuesTable,
  capacityHoldLines,
  formatAge,
  formatTime,
  incidentFenceText,
  jobQueuesTable,
  leaderText,
  missingWorkerKindsText,
  readSystemStatus,
  reenableWaitViews,
  type SystemStatus,
  workerKindsTable,
  workersTable,
} from '@lifeguard/operator-views';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { CliError } from '../errors.ts';
import { renderReenableWaits } from '../output/reenable-waits-section.ts';
import { renderTable } from '../output/table.ts';
import { renderTableView } from '../output/table-view-text.ts';

function workersSection(status: SystemStatus, now: Date): string[] {
  return [
    `Workers (${status.workers.length} up)`,
    status.workers.length === 0
      ? 'no lifeguard process is registered (start the workers: npm start)'
      : renderTableView(workersTable(status, now)),
  ];
}

function workerKindsSection(status: SystemStatus): string[] {
  const missing = missingWorkerKindsText(status);
  return ['Worker kinds', renderTableView(workerKindsTable(status)), ...(missing ? [`⚠ ${missing}`] : [])];
}

function queuesSections(status: SystemStatus): string[] {
  return [
    'Job queues (BullMQ)',
    renderTableView(jobQueuesTable(status)),
    '',
    'RabbitMQ queues',
    status.brokerQueues === null
      ? // The reason itself ends the command's output (its error line): said once, there.
        `unknown: RabbitMQ could not be read${status.brokerError ? ' (why: the last line)' : ''}`
      : renderTableView(brokerQueuesTable(status.brokerQueues)),
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

function admissionSection(status: SystemStatus, now: Date): string[] {
  const { heading, lines } = admissionLines(status, now);
  return [
    heading,
    ...lines.map((line) => `${line.stopped ? '⚠' : ' '} ${line.text}`),
    ...capacityHoldLines(status, now).map((line) => `⚠ ${line}`),
  ];
}

/** The human form of `lifeguard status`: its sections, each followed by a blank line but the last. */
export function renderStatus(status: SystemStatus, now: Date = new Date()): string {
  return [
    ...workersSection(status, now),
    '',
    ...workerKindsSection(status),
    '',
    `Node monitor leader: ${leaderText(status)}`,
    ...admissionSection(status, now),
    '',
    ...queuesSections(status),
    '',
    ...openIncidentsSection(status, now),
  ].join('\n');
}

/** `lifeguard status`: workers up, the node monitor leader and what its last poll held back, queue depths, open incidents. */
export function registerStatusCommand(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('status')
    .description(
      'workers up, node-monitor leader and what its last poll held back, BullMQ and RabbitMQ queue depths, open incidents',
    )
    .option('--json', 'print JSON instead of tables')
    .action(async (options) => {
      const cli = context();
      // Redis holds nearly everything shown: without it the command stops. Without RabbitMQ the rest
      // is still shown, and the command then fails (exit 1) naming RabbitMQ.
      const status = await readSystemStatus(cli);
      const waits = await reenableWaitViews(await cli.redis(), cli.keyPrefix);
      if (options.json) cli.printJson({ ...status, reenableWaits: [...waits.values()] });
      else cli.print([renderStatus(status), renderReenableWaits(waits)].filter(Boolean).join('\n\n'));
      if (status.brokerError !== null) throw new CliError(status.brokerError);
    });
}
