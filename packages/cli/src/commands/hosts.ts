import { shortHostname } from '@lifeguard/instance-ha';
import { configuredDeltaSeconds } from '@lifeguard/operator-actions';
import {
  type FencingFacts,
  fencingAdvice,
  formatAge,
  type HostView,
  hostViews,
  markerText,
  type ReenableWaitView,
  readFencingFacts,
  reenableWaitViews,
  truncate,
} from '@lifeguard/operator-views';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { renderReenableWaits } from '../output/reenable-waits-section.ts';
import { renderTable } from '../output/table.ts';

/** The human form of `lifeguard hosts`, with the advice for hosts whose fencing keeps failing. */
export function renderHosts(
  hosts: ReadonlyArray<HostView>,
  now: Date = new Date(),
  factsByHost: ReadonlyMap<string, FencingFacts> = new Map(),
): string {
  if (hosts.length === 0) return 'Nova lists no nova-compute service';
  const advice = hosts.flatMap((host) =>
    host.incident ? fencingAdvice({ ...host.incident, host: host.host }, factsByHost.get(host.host)) : [],
  );
  const table = renderTable(
    [
      'host',
      'zone',
      'status',
      'state',
      'forced_down',
      'last report',
      'heartbeat',
      'marker',
      'disabled_reason',
      'incident',
    ],
    hosts.map((host) => [
      host.host,
      host.zone,
      host.status,
      host.state,
      host.forcedDown,
      formatAge(host.updatedAt, now),
      formatAge(host.lastHeartbeat, now),
      markerText(host.marker),
      host.disabledReason ? truncate(host.disabledReason, 48) : null,
      host.incident ? `${host.incident.id} (${host.incident.state})` : null,
    ]),
  );
  return advice.length === 0 ? table : [table, '', ...advice].join('\n');
}

/** `lifeguard hosts`: Nova's compute services with state, marker and open incident. */
export function registerHostsCommand(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('hosts')
    .description(
      "each nova-compute service: status, state, forced_down, its agent's last heartbeat, disabled_reason marker, open incident",
    )
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const redis = await cli.redis();
      const hosts = await hostViews(cli.openstack().compute, await cli.incidents(), {
        redis,
        keyPrefix: cli.keyPrefix,
      });
      const waits = await reenableWaitViews(redis, cli.keyPrefix);
      if (options.json) cli.printJson(withReenableWaits(hosts, waits));
      else {
        const now = new Date();
        const facts = await fencingFactsByHost(cli, hosts, now);
        cli.print([renderHosts(hosts, now, facts), renderReenableWaits(waits)].filter(Boolean).join('\n\n'));
      }
    });
}

/** The facts behind the advice for each host whose incident may need it (a fence not proven yet). */
async function fencingFactsByHost(
  cli: ReturnType<ContextProvider>,
  hosts: ReadonlyArray<HostView>,
  now: Date,
): Promise<Map<string, FencingFacts>> {
  const needing = hosts.filter(
    (host) =>
      host.incident && !host.incident.fenced && ['open', 'failed', 'fencing'].includes(host.incident.state),
  );
  if (needing.length === 0) return new Map();
  const connections = {
    redis: await cli.redis(),
    keyPrefix: cli.keyPrefix,
    compute: () => cli.openstack().compute,
  };
  const deltaSeconds = configuredDeltaSeconds();
  return new Map(
    await Promise.all(
      needing.map(
        async (host) =>
          [
            host.host,
            await readFencingFacts(connections, { ...host.incident!, host: host.host }, deltaSeconds, now),
          ] as const,
      ),
    ),
  );
}

/** Each host with `reenableWait`: the evacuation worker's record of Nova refusing forced_down=false, or null. */
export function withReenableWaits(
  hosts: ReadonlyArray<HostView>,
  waits: ReadonlyMap<string, ReenableWaitView>,
): Array<HostView & { reenableWait: ReenableWaitView | null }> {
  return hosts.map((host) => ({ ...host, reenableWait: waits.get(shortHostname(host.host)) ?? null }));
}
