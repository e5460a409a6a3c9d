import { type Incident, parseDisabledReason } from '@lifeguard/instance-ha';
import type { CliContext } from '../cli-context.ts';
import { positiveSeconds, positiveWholeNumber } from '../command-arguments.ts';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { CliError, UsageError } from '../errors.ts';
import { renderTable } from '../output/table.ts';
import {
  CloudSimControl,
  pickPartitionHosts,
  type SimHostState,
  type SimState,
} from '../queries/cloud-sim-control.ts';
import { recoveryStep, reenableStep, watchHostEvents } from './watch-host.ts';

/** The human form of `lifeguard sim status`. */
export function renderSimState(state: SimState, url: string): string {
  return [
    `cloud-sim at ${url}: ${state.hosts.length} hosts, ${state.servers} servers, ${state.migrations} migrations (${state.evacuationsInFlight} evacuations in flight)`,
    renderTable(
      ['host', 'state', 'status', 'forced_down', 'nova-compute', 'power', 'partitioned', 'servers'],
      [...state.hosts]
        .sort((a, b) => a.host.localeCompare(b.host, 'en', { numeric: true }))
        .map((host) => [
          host.host,
          host.state,
          host.status,
          host.forcedDown,
          host.computeRunning ? 'running' : 'stopped',
          host.powerState,
          host.partitioned,
          host.servers,
        ]),
    ),
  ].join('\n');
}

/**
 * Why lifeguard will not re-enable `host` once its nova-compute runs again, or null when it will (an
 * incident of lifeguard is open for the host, or its `disabled_reason` is an evacuation marker, of
 * lifeguard or of InstanceHA, that the node monitor turns into a re-enable).
 */
export function nothingToReenable(host: SimHostState, openIncident: Incident | null): string | null {
  if (openIncident) return null;
  const marker = parseDisabledReason(host.disabledReason);
  if (marker.kind === 'evacuating' || marker.kind === 'complete') return null;
  if (marker.kind === 'failed') {
    return `its evacuation FAILED (disabled_reason "${host.disabledReason}"): lifeguard leaves it disabled for you (lifeguard host rehabilitate ${host.host})`;
  }
  if (host.status === 'disabled') {
    return `it was disabled by someone else (disabled_reason ${host.disabledReason ? `"${host.disabledReason}"` : 'empty'}): lifeguard re-enables only the hosts it disabled`;
  }
  if (host.forcedDown) {
    return 'forced_down was set by someone else: lifeguard lifts it only on the hosts it evacuated';
  }
  return 'lifeguard never disabled it (it is enabled and not forced down), so there is nothing to re-enable';
}

/**
 * Polls cloud-sim twice a second until `host` reports up (Nova's `state`).
 * @throws CliError when it does not within `timeoutSeconds`
 */
async function waitUntilUp(
  cli: CliContext,
  control: CloudSimControl,
  host: string,
  timeoutSeconds: number,
  json: boolean,
): Promise<void> {
  const progress = cli.progress(json);
  const deadline = Date.now() + timeoutSeconds * 1000;
  progress.start(`waiting for ${host} to report up`);
  for (;;) {
    if ((await control.state()).hosts.find((each) => each.host === host)?.state === 'up') {
      progress.succeed(`${host} reports up`);
      return;
    }
    if (Date.now() > deadline) {
      progress.fail(`${host} did not report up within ${timeoutSeconds} s`);
      throw new CliError(`${host} did not report up within ${timeoutSeconds} s`, [
        'see `lifeguard sim status`',
      ]);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function simulator(cli: CliContext, options: { simUrl?: string }): CloudSimControl {
  return new CloudSimControl(options.simUrl ?? cli.config.LIFEGUARD_CLOUD_SIM_URL);
}

/** What `lifeguard sim kill-host` takes. */
interface KillHostOptions {
  simUrl?: string;
  watch?: number | true;
  json?: true;
}

/** `lifeguard sim kill-host <host>`: stops the host's nova-compute and, with --watch, follows the recovery. */
async function killHost(cli: CliContext, host: string, options: KillHostOptions): Promise<void> {
  const control = simulator(cli, options);
  if ((await control.state()).hosts.find((each) => each.host === host)?.computeRunning === false) {
    if (options.json) cli.printJson({ host, killed: false, alreadyDown: true });
    else cli.print(`nova-compute on ${host} is already down; nothing was changed`);
    return;
  }
  // An incident already open for the host is not this kill's: the watch waits for a new one.
  const previous = options.watch === undefined ? null : await (await cli.incidents()).getOpenIncident(host);
  const killedAt = new Date();
  await control.killHost(host);
  if (options.watch === undefined) {
    if (options.json) cli.printJson({ host, killed: true });
    else {
      cli.print(`nova-compute on ${host} killed: its heartbeats stopped; the machine stays on until fenced`);
      cli.print('follow it with: lifeguard incidents, lifeguard hosts (or add --watch)');
    }
    return;
  }
  const say = (text: string) => (options.json ? cli.note(text) : cli.print(text));
  say(`nova-compute on ${host} killed: its heartbeats stopped; the machine stays on until fenced`);
  if (previous) {
    say(`${host} has an open incident (${previous.id}, ${previous.state}): following only a new incident`);
  }
  const watched = await watchHostEvents(cli, {
    host,
    since: killedAt,
    timeoutSeconds: options.watch === true ? 300 : options.watch,
    waitingFor: `waiting for lifeguard to act on ${host}`,
    step: recoveryStep(host),
    ignoredIncidentIds: previous ? [previous.id] : [],
    json: options.json === true,
    // Revived (by `sim revive-host`) before lifeguard did anything: nothing will happen to watch.
    endedWithoutEvents: async () =>
      (await control.state()).hosts.find((each) => each.host === host)?.computeRunning === true
        ? `nova-compute on ${host} runs again and lifeguard had not acted on it: nothing to recover`
        : null,
  });
  if (options.json) cli.printJson({ host, killed: true, events: watched.events });
  if (watched.failure) {
    throw new CliError(
      watched.failure,
      watched.hints.length > 0 ? watched.hints : ['see `lifeguard incidents` and `lifeguard hosts`'],
    );
  }
}

/** What `lifeguard sim revive-host` takes. */
type ReviveHostOptions = KillHostOptions;

/** `lifeguard sim revive-host <host>`: starts the host's nova-compute and, with --watch, follows the re-enable. */
async function reviveHost(cli: CliContext, host: string, options: ReviveHostOptions): Promise<void> {
  const control = simulator(cli, options);
  const before = (await control.state()).hosts.find((each) => each.host === host);
  if (before?.computeRunning === true) {
    if (options.json) cli.printJson({ host, started: false, alreadyRunning: true });
    else cli.print(`nova-compute on ${host} already runs; nothing was changed`);
    return;
  }
  // Decided before the revive: lifeguard may re-enable the host (and close its incident) at once.
  const nothing =
    options.watch === undefined || before === undefined
      ? null
      : nothingToReenable(before, await (await cli.incidents()).getOpenIncident(host));
  const revivedAt = new Date();
  await control.reviveHost(host);
  if (options.watch === undefined) {
    if (options.json) cli.printJson({ host, started: true });
    else cli.print(`nova-compute on ${host} started`);
    return;
  }
  const say = (text: string) => (options.json ? cli.note(text) : cli.print(text));
  say(`nova-compute on ${host} started`);
  const timeoutSeconds = options.watch === true ? 300 : options.watch;
  if (nothing !== null) {
    say(`nothing to re-enable on ${host}: ${nothing}`);
    await waitUntilUp(cli, control, host, timeoutSeconds, options.json === true);
    if (options.json) cli.printJson({ host, started: true, reenable: false, reason: nothing, events: [] });
    return;
  }
  const watched = await watchHostEvents(cli, {
    host,
    since: revivedAt,
    timeoutSeconds,
    waitingFor: `waiting for lifeguard to re-enable ${host}`,
    step: reenableStep,
    json: options.json === true,
  });
  if (options.json) cli.printJson({ host, started: true, events: watched.events });
}

/** `lifeguard sim partition <count>`: cuts running hosts off the control plane at once. */
async function partitionHosts(
  cli: CliContext,
  count: number,
  options: { simUrl?: string; hosts?: string[]; json?: true },
): Promise<void> {
  const control = simulator(cli, options);
  if (options.hosts && options.hosts.length !== count) {
    throw new UsageError(`--hosts names ${options.hosts.length} host(s) but <count> is ${count}`);
  }
  const hosts = options.hosts ?? pickPartitionHosts(await control.state(), count);
  await control.partition(hosts);
  if (options.json) cli.printJson({ partitioned: hosts });
  else
    cli.print(`partitioned ${hosts.length} host(s): ${hosts.join(', ')} (end it with: lifeguard sim heal)`);
}

/** `lifeguard sim status|kill-host|revive-host|partition|heal`: fault injection on cloud-sim. */
export function registerSimCommands(program: LifeguardProgram, context: ContextProvider): void {
  const sim = program
    .command('sim')
    .description('the simulated cloud (cloud-sim): inject host failures and partitions, and see its hosts');
  const simUrlHelp = "cloud-sim's address (default LIFEGUARD_CLOUD_SIM_URL, else http://127.0.0.1:8780)";

  sim
    .command('status')
    .description("every simulated host: Nova's view, nova-compute, power, partition, servers")
    .option('--sim-url <url>', simUrlHelp)
    .option('--json', 'print JSON instead of a table')
    .action(async (options) => {
      const cli = context();
      const control = simulator(cli, options);
      const state = await control.state();
      if (options.json) cli.printJson(state);
      else cli.print(renderSimState(state, control.url));
    });

  sim
    .command('kill-host')
    .description(
      "kill the host's nova-compute (its heartbeats stop; the machine stays on until fenced); a host already down is left as it is",
    )
    .argument('<host>', 'a simulated compute host, e.g. compute3')
    .option('--sim-url <url>', simUrlHelp)
    .option(
      '--watch [seconds]',
      "follow lifeguard's recovery (host.down, fencing, evacuation, and the re-enable once the host is back) until it ends or the time runs out (default 300 s); exit 1 when the recovery fails",
      positiveSeconds,
    )
    .option('--json', 'print JSON (with --watch, the events; progress goes to standard error)')
    .action((host, options) => killHost(context(), host, options));

  sim
    .command('revive-host')
    .description(
      "start the host's nova-compute again (it cleans up evacuated instances; lifeguard re-enables the host); a running one is left as it is",
    )
    .argument('<host>', 'a simulated compute host')
    .option('--sim-url <url>', simUrlHelp)
    .option(
      '--watch [seconds]',
      'follow until lifeguard re-enables the host or the time runs out (default 300 s); a host lifeguard did not disable is followed until it reports up',
      positiveSeconds,
    )
    .option('--json', 'print JSON (with --watch, the events; progress goes to standard error)')
    .action((host, options) => reviveHost(context(), host, options));

  sim
    .command('partition')
    .description(
      'cut <count> running hosts off the control plane at once (their heartbeats stop arriving): a partition, which THRESHOLD must stop',
    )
    .argument('<count>', 'how many hosts', positiveWholeNumber)
    .option('--hosts <names...>', 'these hosts instead of the first <count> running ones')
    .option('--sim-url <url>', simUrlHelp)
    .option('--json', 'print the partitioned hosts as JSON')
    .action((count, options) => partitionHosts(context(), count, options));

  sim
    .command('heal')
    .description('end the partition (of the given hosts, or of every partitioned host)')
    .argument('[hosts...]', 'the hosts to reconnect (default: all)')
    .option('--sim-url <url>', simUrlHelp)
    .option('--json', 'print the healed hosts as JSON')
    .action(async (hosts, options) => {
      const cli = context();
      await simulator(cli, options).heal(hosts);
      if (options.json) cli.printJson({ healed: hosts.length > 0 ? hosts : 'every partitioned host' });
      else cli.print(hosts.length > 0 ? `healed ${hosts.join(', ')}` : 'healed every partitioned host');
    });
}
