import { eventIncidentId, type LifeguardEvent } from '@lifeguard/contracts';
import { formatTime, truncate } from '@lifeguard/operator-views';
import { eventTypes, pastMoment, positiveWholeNumber } from '../command-arguments.ts';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { renderTable } from '../output/table.ts';
import { summariseEvent } from './incidents.ts';

/** The host(s) an event is about: `data.host`, or the `data.hosts` of threshold and gate events. */
export function eventHosts(event: LifeguardEvent): string[] {
  const data = event.data as { host?: string; hosts?: string[] };
  if (typeof data.host === 'string') return [data.host];
  return Array.isArray(data.hosts) ? data.hosts : [];
}

/** The human form of `lifeguard events`: each event's details cut at 100 characters, or whole with `wide`. */
export function renderEvents(
  events: ReadonlyArray<LifeguardEvent>,
  options: { wide?: boolean } = {},
): string {
  if (events.length === 0) return 'no events recorded';
  return renderTable(
    ['time', 'event', 'from', 'host', 'incident', 'details'],
    events.map((event) => {
      const hosts = eventHosts(event);
      return [
        formatTime(event.occurredAt),
        event.type,
        `${event.source.service} ${event.source.instance}`,
        hosts.length > 3 ? `${hosts.slice(0, 3).join(',')},… (${hosts.length})` : hosts.join(','),
        eventIncidentId(event),
        options.wide ? summariseEvent(event) : truncate(summariseEvent(event), 100),
      ];
    }),
  );
}

/** `lifeguard events`: the most recent events of every kind (the journal), oldest first. */
export function registerEventsCommand(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('events')
    .description(
      'the most recent events of every kind, oldest first: host.down, threshold.exceeded, admission.blocked, ...',
    )
    .option(
      '--limit <count>',
      'how many of the most recent matching events to show (after --type, --host and --since)',
      positiveWholeNumber,
      30,
    )
    .option(
      '--type <types...>',
      'only these event types (e.g. threshold.exceeded admission.blocked)',
      eventTypes,
    )
    .option('--host <host>', 'only events about this host')
    .option(
      '--since <when>',
      'only events since then: a duration back from now (90s, 10m, 2h, 1d) or an ISO 8601 time',
      (value) => pastMoment(value),
    )
    .option('--wide', "each event's details whole (a gate's reason, every host), not cut at 100 characters")
    .option('--json', 'print the events as JSON')
    .action(async (options) => {
      const cli = context();
      // Filtered while reading: --limit counts matching events, not the newest events of any type.
      const events = await (await cli.journal()).recentMatching(
        options.limit,
        (event) =>
          (!options.type || options.type.includes(event.type)) &&
          (!options.host || eventHosts(event).includes(options.host)) &&
          (!options.since || Date.parse(event.occurredAt) >= options.since.getTime()),
      );
      if (options.json) cli.printJson(events);
      else cli.print(renderEvents(events, { wide: options.wide === true }));
    });
}
