import { enableService, type Incident } from '@lifeguard/instance-ha';
import { findComputeService, NovaApiError } from '@lifeguard/openstack';
import type { CliContext } from '../cli-context.ts';
import { confirmAction } from '../confirm.ts';
import { CliError } from '../errors.ts';
import { formatDuration } from '../output/format.ts';
import {
  describeStep,
  planRehabilitation,
  type RehabilitationStep,
  type RehabilitationVerdict,
} from '../queries/rehabilitation-plan.ts';

function printPlan(cli: CliContext, host: string, verdict: RehabilitationVerdict, incident: Incident | null) {
  if (verdict.kind !== 'plan') return;
  const lines = [`Checked: ${verdict.checks.join('; ')}`, `Plan for ${host}:`];
  verdict.steps.forEach((step, index) => {
    lines.push(`  ${index + 1}. ${describeStep(step, host, incident)}`);
  });
  cli.print(lines.join('\n'));
}

/**
 * Checks the host (planRehabilitation), prints the plan, and — confirmed, unless `dryRun` — runs it
 * step by step with progress.
 * @throws CliError when refused or when a step fails (what was done stays done)
 */
export async function rehabilitate(
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
