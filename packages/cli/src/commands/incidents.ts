import type { LifeguardEvent } from '@lifeguard/contracts';
import type { Incident } from '@lifeguard/instance-ha';
import { configuredDeltaSeconds } from '@lifeguard/operator-actions';
import {
  type FencingFacts,
  fencingAdvice,
  formatAge,
  formatDuration,
  formatOffset,
  formatTime,
  incidentFenceText,
  listIncidents,
  readFencingFacts,
  readIncidentTimeline,
  type TimelineEntry,
  truncate,
} from '@lifeguard/operator-views';
import { positiveWholeNumber } from '../command-arguments.ts';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { CliError } from '../errors.ts';
import { renderFields, renderTable } from '../output/table.ts';

function summariseValue(value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length <= 3) return `[${value.map((each) => summariseValue(each)).join(',')}]`;
    return `[${value.length} items]`;
  }
  if (value !== null && typeof value === 'object') return `{${Object.keys(value).length} fields}`;
  if (typeof value === 'number' && !Number.isInteger(value)) return String(Number(value.toFixed(3)));
  return String(value);
}

/** An event's data as `key=value` pairs, without the host and incident the table already shows. */
export function summariseEvent(event: LifeguardEvent): string {
  return Object.entries(event.data as Record<string, unknown>)
    .filter(([key, value]) => key !== 'host' && key !== 'incidentId' && value !== undefined)
    .map(([key, value]) => `${key}=${summariseValue(value)}`)
    .join(' ');
}

/** The human form of `lifeguard incident <id>`. */
export function renderIncident(
  incident: Incident,
  entries: ReadonlyArray<TimelineEntry>,
  now: Date = new Date(),
  facts: FencingFacts = {},
): string {
  const closedOrNow = incident.closedAt ? Date.parse(incident.closedAt) : now.getTime();
  const fields: Array<readonly [string, string | number | boolean | null]> = [
    ['incident', incident.id],
    ['host', incident.host],
    ['compute service', incident.serviceId],
    ['state', incident.state],
    ['opened', `${formatTime(incident.openedAt)} (${formatAge(incident.openedAt, now)})`],
    ['updated', formatTime(incident.updatedAt)],
    ['closed', incident.closedAt ? formatTime(incident.closedAt) : null],
    ['outcome', incident.outcome],
    ['duration', formatDuration(closedOrNow - Date.parse(incident.openedAt))],
    ['fencing token', incident.fencingToken],
    ['kdump fenced', incident.kdumpFenced],
    ['resumed', incident.resume],
    [
      'evidence',
      `state=${incident.evidence.state} status=${incident.evidence.status} forced_down=${incident.evidence.forcedDown} updated_at=${incident.evidence.updatedAt ?? '-'} age=${incident.evidence.ageSeconds ?? '-'} s`,
    ],
  ];
  const fence = incident.fence;
  const fenceLines = fence
    ? renderFields([
        ['proof', fence.proof],
        ['method', fence.method],
        ['at', formatTime(fence.at)],
        ['by', fence.by],
        ['note', fence.note],
      ])
    : 'none recorded: the host has not been fenced in this incident (it will not be evacuated)';
  const events =
    entries.length === 0
      ? 'no events recorded'
      : renderTable(
          ['after opening', 'event', 'from', 'details'],
          entries.map(({ offsetMilliseconds, event }) => [
            formatOffset(offsetMilliseconds),
            event.type,
            `${event.source.service} ${event.source.instance}`,
            truncate(summariseEvent(event), 120),
          ]),
        );
  const advice = fencingAdvice({ ...incident, fenced: fence !== null }, facts);
  const next = advice.length === 0 ? [] : ['', 'Next step', ...advice];
  const skipped = notEvacuated(entries);
  return [
    renderFields(fields),
    '',
    'Fence proof',
    fenceLines,
    ...next,
    ...skipped,
    '',
    'Timeline',
    events,
  ].join('\n');
}

/** The incident's servers left on the host (`instance.evacuation.skipped`), with the reason: a section, or nothing. */
function notEvacuated(entries: ReadonlyArray<TimelineEntry>): string[] {
  const rows = entries.flatMap(({ event }) =>
    event.type === 'instance.evacuation.skipped'
      ? [[event.data.instanceName, event.data.instanceId, event.data.reason, event.data.detail ?? '-']]
      : [],
  );
  return rows.length === 0 ? [] : ['', 'Not evacuated', renderTable(['server', 'id', 'reason', 'why'], rows)];
}

/** The human form of `lifeguard incidents`. */
export function renderIncidents(incidents: ReadonlyArray<Incident>, now: Date = new Date()): string {
  if (incidents.length === 0) return 'no incidents';
  return renderTable(
    ['incident', 'host', 'state', 'opened', 'fence', 'closed', 'outcome'],
    incidents.map((incident) => [
      incident.id,
      incident.host,
      incident.state,
      `${formatTime(incident.openedAt)} (${formatAge(incident.openedAt, now)})`,
      incidentFenceText(incident),
      formatTime(incident.closedAt),
      incident.outcome,
    ]),
  );
}

/** `lifeguard incidents` and `lifeguard incident <id>`. */
export function registerIncidentCommands(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('incidents')
    .description('open incidents and the most recent ones (newest first)')
    .option(
      '--limit <count>',
      'how many recent incidents to show besides the open ones',
      positiveWholeNumber,
      20,
    )
    .option('--open', 'only the open incidents')
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const incidents = await listIncidents(await cli.incidents(), options.open ? 0 : options.limit);
      if (options.json) cli.printJson(incidents);
      else cli.print(renderIncidents(incidents));
    });

  program
    .command('incident')
    .description(
      "one incident: its record, fence proof and event timeline (times from the incident's opening)",
    )
    .argument('<id>', 'the incident id (see `lifeguard incidents`)')
    .option('--json', 'print JSON instead of tables')
    .action(async (id, options) => {
      const cli = context();
      const found = await readIncidentTimeline(await cli.incidents(), () => cli.journal(), id);
      if (found === null) {
        throw new CliError(`no incident ${id}`, [
          'list incidents with `lifeguard incidents` (closed ones are kept 30 days)',
        ]);
      }
      if (options.json) {
        cli.printJson(found);
        return;
      }
      const now = new Date();
      const facts = await readFencingFacts(
        { redis: await cli.redis(), keyPrefix: cli.keyPrefix, compute: () => cli.openstack().compute },
        { ...found.incident, fenced: found.incident.fence !== null },
        configuredDeltaSeconds(),
        now,
      );
      cli.print(renderIncident(found.incident, found.timeline, now, facts));
    });
}
