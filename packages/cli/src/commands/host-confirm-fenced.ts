import {
  type Incident,
  type LoadInstanceHaConfigOptions,
  loadInstanceHaConfig,
} from '@lifeguard/instance-ha';
import type { CliContext } from '../cli-context.ts';
import { confirmAction } from '../confirm.ts';
import { CliError, HostIsReportingError } from '../errors.ts';
import { formatTime } from '../output/format.ts';
import { type HostReporting, judgeHostReporting, lastHeartbeat } from '../queries/host-reporting.ts';

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
 * DELTA in seconds as the node monitor reads it: config.yaml (INSTANCEHA_CONFIG_PATH, else the default
 * path) with its environment override, so a confirmation judges "reporting" by the deployment's DELTA
 * and not by InstanceHA's default (docs/instance-ha-rules.md#delta). A missing config.yaml gives the
 * default, 30.
 * @throws ConfigError naming the key or file when config.yaml is invalid
 */
export function configuredDeltaSeconds(options: LoadInstanceHaConfigOptions = {}): number {
  return loadInstanceHaConfig(options).config.deltaSeconds;
}

/**
 * Reads the host's own reports (Nova's service, the last heartbeat).
 * @throws CliError when Nova cannot be read: a confirmation needs the evidence, or the override
 */
async function readReporting(cli: CliContext, host: string, deltaSeconds: number): Promise<HostReporting> {
  try {
    const [services, heartbeat] = await Promise.all([
      cli.openstack().compute.listServices({ binary: 'nova-compute', host }),
      lastHeartbeat(await cli.redis(), cli.keyPrefix, host),
    ]);
    return judgeHostReporting(services[0] ?? null, heartbeat, deltaSeconds);
  } catch (error) {
    throw new CliError(
      `cannot check whether ${host} still reports (${(error as Error).message}); nothing was recorded`,
      ['Nova must show the host silent before a confirmation is recorded; see --host-is-reporting-override.'],
    );
  }
}

/**
 * `lifeguard host confirm-fenced <host>`: records an operator's proof that the host is off. Refused
 * (CliError, nothing recorded) while the host reports to Nova or sends heartbeats, unless
 * `hostIsReportingOverride` is given; the overridden evidence is then recorded in the fence record.
 * @throws CliError without an open incident; HostIsReportingError while the host reports
 */
export async function confirmFenced(
  cli: CliContext,
  host: string,
  options: ConfirmFencedOptions,
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
  const reporting = await readReporting(cli, host, options.deltaSeconds ?? configuredDeltaSeconds());
  if (reporting.reporting && !options.hostIsReportingOverride) {
    throw new HostIsReportingError(host, reporting.evidence, [
      'A host that reports is running: evacuating it would run its instances twice. Check the machine',
      '(BMC, PDU outlet, console): power it off, or cut it off the network and storage, and wait until',
      'Nova shows it silent. If you are certain it is off or isolated and only its reports mislead, run',
      'this again with --host-is-reporting-override (recorded with your name).',
    ]);
  }
  const override = reporting.reporting ? reporting.evidence.join('; ') : null;
  cli.note(confirmFencedWarning(host, incident));
  if (override !== null)
    cli.note(`OVERRIDE: ${host} is reporting (${override}); this is recorded with your name.`);
  await confirmAction(cli, { yes: options.yes, action: `confirm that ${host} is powered off`, answer: host });
  const updated = await store.confirmFencedByOperator(host, options.operator, options.note ?? null, override);
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
