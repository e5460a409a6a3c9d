import type { Incident } from '@lifeguard/instance-ha';
import { confirmFenced } from '@lifeguard/operator-actions';
import { formatTime } from '@lifeguard/operator-views';
import type { CliContext } from '../cli-context.ts';
import { confirmAction } from '../confirm.ts';

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

/** The options of `host confirm-fenced`. */
export interface ConfirmFencedOptions {
  operator: string;
  note?: string;
  yes?: true;
  json?: true;
  /** DELTA: a report or heartbeat younger than this, in seconds, means the host runs (default: configuredDeltaSeconds()). */
  deltaSeconds?: number;
  /** Record the confirmation although the host reports (the evidence is recorded with it). */
  hostIsReportingOverride?: true;
}

/**
 * `lifeguard host confirm-fenced <host>`: records an operator's proof that the host is off
 * (confirmFenced of @lifeguard/operator-actions), after the warning and the operator's confirmation
 * (`--yes`, or the host's name typed on a terminal). Refused (nothing recorded) while the host reports
 * to Nova or sends heartbeats, unless `hostIsReportingOverride` is given.
 * @throws OperatorError without an open incident; HostIsReportingError while the host reports;
 *   ConfirmationRequiredError when not confirmed
 */
export async function confirmFencedCommand(
  cli: CliContext,
  host: string,
  options: ConfirmFencedOptions,
): Promise<void> {
  const outcome = await confirmFenced(
    cli,
    host,
    {
      operator: options.operator,
      note: options.note ?? null,
      ...(options.deltaSeconds === undefined ? {} : { deltaSeconds: options.deltaSeconds }),
      hostIsReportingOverride: options.hostIsReportingOverride === true,
    },
    async ({ incident, overriddenEvidence }) => {
      cli.note(confirmFencedWarning(host, incident));
      if (overriddenEvidence !== null)
        cli.note(`OVERRIDE: ${host} is reporting (${overriddenEvidence}); this is recorded with your name.`);
      await confirmAction(cli, {
        yes: options.yes,
        action: `confirm that ${host} is powered off`,
        answer: host,
      });
    },
  );
  const { incident } = outcome;
  const fence = incident.fence!;
  if (options.json) {
    cli.printJson({ recorded: outcome.kind === 'recorded', incident });
    return;
  }
  if (outcome.kind === 'already-fenced') {
    cli.print(
      `${host} is already fenced in incident ${incident.id}: ${fence.proof} by ${fence.by ?? fence.method} at ${formatTime(fence.at)}; nothing recorded`,
    );
    return;
  }
  if (outcome.kind === 'fenced-meanwhile') {
    cli.print(
      `incident ${incident.id} was fenced meanwhile (${fence.proof} by ${fence.by ?? fence.method}); your confirmation was not needed`,
    );
    return;
  }
  cli.print(
    [
      `recorded on incident ${incident.id}: proof operator-confirmed by ${fence.by} at ${formatTime(fence.at)}${fence.note ? ` (note: ${fence.note})` : ''}`,
      'The fencing worker goes on from this proof within LIFEGUARD_FENCING_RECONCILE_SECONDS (15 s by default):',
      'forced_down, disabled with a marker, then the host is handed to evacuation. Follow it with',
      `  lifeguard incident ${incident.id}`,
    ].join('\n'),
  );
}
