import {
  type CheckedHost,
  checkRehabilitation,
  describeStep,
  RehabilitationRefusedError,
  rehabilitateHost,
} from '@lifeguard/operator-actions';
import type { CliContext } from '../cli-context.ts';
import { confirmAction } from '../confirm.ts';

function printPlan(cli: CliContext, host: string, { verdict, incident }: CheckedHost): void {
  if (verdict.kind !== 'plan') return;
  const lines = [`Checked: ${verdict.checks.join('; ')}`, `Plan for ${host}:`];
  verdict.steps.forEach((step, index) => {
    lines.push(`  ${index + 1}. ${describeStep(step, host, incident)}`);
  });
  cli.print(lines.join('\n'));
}

/**
 * `lifeguard host rehabilitate <host>`: checks the host (checkRehabilitation of
 * @lifeguard/operator-actions), prints the plan, and — confirmed, unless `dryRun` — runs it step by
 * step with progress. With `json`, progress goes to standard error and the verdict and the steps done
 * are printed as JSON, a refusal's too.
 * @throws OperatorError when refused or when a step fails (what was done stays done)
 */
export async function rehabilitate(
  cli: CliContext,
  host: string,
  options: {
    dryRun?: true;
    yes?: true;
    json?: true;
    waitSeconds: number;
    serviceDownTime: number;
    /** Who puts it back: recorded as who closed the incident. */
    operator: string;
  },
): Promise<void> {
  const progress = cli.progress(options.json === true);
  let checked: CheckedHost;
  try {
    checked = await checkRehabilitation(
      cli,
      host,
      { serviceDownTimeSeconds: options.serviceDownTime },
      progress,
    );
  } catch (error) {
    if (error instanceof RehabilitationRefusedError && options.json)
      cli.printJson({ host, verdict: error.verdict, done: [] });
    throw error;
  }
  const { verdict } = checked;
  if (verdict.kind === 'nothing-to-do') {
    if (options.json) cli.printJson({ host, verdict, done: [] });
    return;
  }
  if (!options.json) printPlan(cli, host, checked);
  if (options.dryRun) {
    if (options.json) cli.printJson({ host, verdict, done: [] });
    else cli.print('dry run: nothing was changed');
    return;
  }
  await confirmAction(cli, { yes: options.yes, action: `put ${host} back into service`, answer: host });
  const done = await rehabilitateHost(
    cli,
    checked,
    { waitSeconds: options.waitSeconds, closedBy: options.operator },
    progress,
  );
  if (options.json) cli.printJson({ host, verdict, done });
  else cli.print(`${host} is back in service`);
}
