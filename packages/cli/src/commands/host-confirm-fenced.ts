import type { Incident } from '@lifeguard/instance-ha';
import type { CliContext } from '../cli-context.ts';
import { confirmAction } from '../confirm.ts';
import { CliError } from '../errors.ts';
import { formatTime } from '../output/format.ts';

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

export async function confirmFenced(
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
