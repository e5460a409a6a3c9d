import { type Command, InvalidArgumentError } from '@commander-js/extra-typings';
import { enableService, findComputeService } from '@lifeguard/evacuation-worker';
import type { Incident } from '@lifeguard/instance-ha';
import { NovaApiError } from '@lifeguard/openstack';
import type { CliContext } from '../cli-context.ts';
import { confirmAction } from '../confirm.ts';
import { CliError } from '../errors.ts';
import { formatDuration, formatTime } from '../output/format.ts';
import type { ContextProvider } from '../program.ts';
import {
  describeStep,
  NOVA_SERVICE_DOWN_TIME_SECONDS,
  planRehabilitation,
  type RehabilitationStep,
  type RehabilitationVerdict,
} from '../queries/rehabilitation-plan.ts';

function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  return value.trim();
}

function seconds(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0)
    throw new InvalidArgumentError('must be a number of seconds > 0');
  return number;
}

/** The warning `host confirm-fenced` prints before asking. */
export function confirmFencedWarning(host: string, incident: Incident): string {
  return [
    `WARNING: you are declaring that compute host ${host} is POWERED OFF.`,
    `lifeguard takes this as proof of fencing for incident ${incident.id}: it forces the compute service`,
    'down, disables it, and rebuilds (evacuates) its instances on other hosts. If the host is in fact still',
    'running, every one of those instances runs twice on the same disks and volumes: data corruption.',
    'Check that the machine is off (PDU outlet, rack power, data-centre staff) before you confirm.',
  ].join('\n');
}

async function confirmFenced(
  cli: CliContext,
  host: string,
  options: { operator: string; note?: string; yes?: true; json?: true },
): Promise<void> {
  const store = await cli.incidents();
  const incident = await store.getOpenIncident(host);
  if (incident === null) {
    throw new CliError(`${host} has no open incident: there is nothing to confirm, nothing was recorded`, [
      'An operator confirmation applies to the incident lifeguard opened when the node monitor declared the host down.',
      'See `lifeguard incidents` and `lifeguard hosts`.',
    ]);
  }
  if (incident.fence !== null) {
    const fence = incident.fence;
    if (options.json) cli.printJson({ recorded: false, incident });
    else {
      cli.print(
        `${host} is already fenced in incident ${incident.id}: ${fence.proof} by ${fence.by ?? fence.method} at ${formatTime(fence.at)}; nothing recorded`,
      );
    }
    return;
  }
  cli.note(confirmFencedWarning(host, incident));
  await confirmAction(cli, { yes: options.yes, action: `confirm that ${host} is powered off`, answer: host });
  const updated = await store.confirmFencedByOperator(host, options.operator, options.note ?? null);
  const fence = updated.fence!;
  const ours = fence.proof === 'operator-confirmed' && fence.by === options.operator;
  if (options.json) {
    cli.printJson({ recorded: ours, incident: updated });
    return;
  }
  if (!ours) {
    cli.print(
      `incident ${updated.id} was fenced meanwhile (${fence.proof} by ${fence.by ?? fence.method}); your confirmation was not needed`,
    );
    return;
  }
  cli.print(
    [
      `recorded on incident ${updated.id}: proof operator-confirmed by ${fence.by} at ${formatTime(fence.at)}${fence.note ? ` (note: ${fence.note})` : ''}`,
      'The fencing worker goes on from this proof within LIFEGUARD_FENCING_RECONCILE_SECONDS (15 s by default):',
      'forced_down, disabled with a marker, then the host is handed to evacuation. Follow it with',
      `  lifeguard incident ${updated.id}`,
    ].join('\n'),
  );
}

function printPlan(cli: CliContext, host: string, verdict: RehabilitationVerdict, incident: Incident | null) {
  if (verdict.kind !== 'plan') return;
  const lines = [`Checked: ${verdict.checks.join('; ')}`, `Plan for ${host}:`];
  verdict.steps.forEach((step, index) => {
    lines.push(`  ${index + 1}. ${describeStep(step, host, incident)}`);
  });
  cli.print(lines.join('\n'));
}

async function rehabilitate(
  cli: CliContext,
  host: string,
  options: { dryRun?: true; yes?: true; json?: true; waitSeconds: number; serviceDownTime: number },
): Promise<void> {
  const compute = cli.openstack().compute;
  const store = await cli.incidents();
  const progress = cli.progress(options.json === true);
  progress.start(`Reading ${host}: compute service, incident, evacuations`);
  const service = await findComputeService(compute, host, null);
  if (service === null) {
    progress.fail(`Nova has no nova-compute service on ${host}`);
    throw new CliError(`no compute host ${host}`, ['see `lifeguard hosts` for the hosts Nova knows']);
  }
  const [incident, migrations] = await Promise.all([
    store.getOpenIncident(host),
    compute.listMigrations({ sourceCompute: service.host, migrationType: 'evacuation', maxRecords: 1000 }),
  ]);
  const verdict = planRehabilitation({
    host: service.host,
    service,
    incident,
    migrations,
    serviceDownTimeSeconds: options.serviceDownTime,
    now: new Date(),
  });
  if (verdict.kind === 'refuse') {
    progress.fail(`${host} cannot be rehabilitated now; nothing was changed`);
    if (options.json) cli.printJson({ host, verdict, done: [] });
    throw new CliError(verdict.reasons.join('; '), verdict.hints);
  }
  if (verdict.kind === 'nothing-to-do') {
    progress.succeed(verdict.reason);
    if (options.json) cli.printJson({ host, verdict, done: [] });
    return;
  }
  progress.succeed(`${host} can be put back into service`);
  if (!options.json) printPlan(cli, host, verdict, incident);
  if (options.dryRun) {
    if (options.json) cli.printJson({ host, verdict, done: [] });
    else cli.print('dry run: nothing was changed');
    return;
  }
  await confirmAction(cli, { yes: options.yes, action: `put ${host} back into service`, answer: host });
  const done: RehabilitationStep[] = [];
  for (const step of verdict.steps) {
    await runStep(cli, step, { host: service.host, serviceId: service.id, incident, options, progress });
    done.push(step);
  }
  if (options.json) cli.printJson({ host, verdict, done });
  else cli.print(`${host} is back in service`);
}

async function runStep(
  cli: CliContext,
  step: RehabilitationStep,
  target: {
    host: string;
    serviceId: string;
    incident: Incident | null;
    options: { waitSeconds: number };
    progress: ReturnType<CliContext['progress']>;
  },
): Promise<void> {
  const { host, serviceId, incident, progress } = target;
  const compute = cli.openstack().compute;
  switch (step) {
    case 'unset-forced-down':
      progress.start(`Lifting forced_down of ${host}`);
      try {
        await compute.updateService(serviceId, { forced_down: false });
      } catch (error) {
        progress.fail(`Nova refused to lift forced_down of ${host}`);
        if (error instanceof NovaApiError && error.status === 400) {
          throw new CliError(`Nova refused: ${error.apiMessage}`, [
            `Nova refuses while evacuations from ${host} are "done": start nova-compute on ${host} so it cleans them up, then run this again.`,
          ]);
        }
        throw error;
      }
      progress.succeed(`forced_down of ${host} lifted`);
      return;
    case 'wait-until-up': {
      const started = Date.now();
      progress.start(`Waiting for nova-compute on ${host} to report up`);
      for (;;) {
        const service = await findComputeService(compute, host, serviceId);
        if (service?.state === 'up') break;
        const waited = Date.now() - started;
        if (waited > target.options.waitSeconds * 1000) {
          progress.fail(`nova-compute on ${host} did not report up within ${target.options.waitSeconds} s`);
          throw new CliError(`${host} still reports ${service?.state ?? 'nothing'}; it stays disabled`, [
            `start nova-compute on ${host}, then run this again (forced_down is already lifted)`,
          ]);
        }
        progress.update(`Waiting for nova-compute on ${host} to report up (${formatDuration(waited)})`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      progress.succeed(`nova-compute on ${host} reports up`);
      return;
    }
    case 'enable':
      progress.start(`Enabling the compute service of ${host}`);
      await enableService(compute, serviceId);
      progress.succeed(`${host} enabled`);
      return;
    case 'close-incident':
      if (!incident) return;
      progress.start(`Closing incident ${incident.id}`);
      await (await cli.incidents()).close(incident.id, `rehabilitated by ${cli.operator}`);
      progress.succeed(`incident ${incident.id} closed`);
      return;
    case 'publish-reenabled':
      progress.start('Publishing host.reenabled');
      await (await cli.events()).publish('host.reenabled', {
        host,
        serviceId,
        incidentId: incident?.id ?? null,
      });
      progress.succeed('host.reenabled published');
      return;
  }
}

/** `lifeguard host confirm-fenced <host>` and `lifeguard host rehabilitate <host>`. */
export function registerHostCommands(
  program: Command<[], { verbose?: true }>,
  context: ContextProvider,
): void {
  const host = program.command('host').description('act on one compute host');

  host
    .command('confirm-fenced')
    .description(
      "record that you checked the host is powered off (its BMC lost power with it): the proof lifeguard's fencing worker needs to evacuate it",
    )
    .argument('<host>', 'the compute host (as Nova names it; short names match)')
    .option('--operator <name>', 'who confirms (recorded with the time)', nonEmpty)
    .option('--note <text>', 'why you are sure, e.g. "rack 12 PDU off"')
    .option('--yes', 'confirm without being asked')
    .option('--json', 'print JSON')
    .action(async (name, options) => {
      const cli = context();
      await confirmFenced(cli, name, { ...options, operator: options.operator ?? cli.operator });
    });

  host
    .command('rehabilitate')
    .description(
      "put a host left FAILED, disabled or forced down back into service, safely: checks the incident and the host's evacuations, lifts forced_down, enables it, closes the incident",
    )
    .argument('<host>', 'the compute host (as Nova names it)')
    .option('--dry-run', 'check and print the plan; change nothing')
    .option('--yes', 'go ahead without being asked')
    .option(
      '--wait-seconds <seconds>',
      'how long to wait for nova-compute to report up after forced_down is lifted',
      seconds,
      120,
    )
    .option(
      '--service-down-time <seconds>',
      "Nova's service_down_time: a forced-down service silent for longer is not running",
      seconds,
      NOVA_SERVICE_DOWN_TIME_SECONDS,
    )
    .option('--json', 'print JSON (progress goes to standard error)')
    .action(async (name, options) => {
      await rehabilitate(context(), name, options);
    });
}
