import { NOVA_SERVICE_DOWN_TIME_SECONDS } from '@lifeguard/operator-actions';
import { nonEmptyText, positiveSeconds } from '../command-arguments.ts';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { confirmFencedCommand } from './host-confirm-fenced.ts';
import { rehabilitate } from './host-rehabilitate.ts';

/** `lifeguard host confirm-fenced <host>` and `lifeguard host rehabilitate <host>`. */
export function registerHostCommands(program: LifeguardProgram, context: ContextProvider): void {
  const host = program.command('host').description('act on one compute host');

  host
    .command('confirm-fenced')
    .description(
      "record that you checked the host is powered off (its BMC lost power with it): the proof lifeguard's fencing worker needs to evacuate it",
    )
    .argument('<host>', 'the compute host (as Nova names it; short names match)')
    .option('--operator <name>', 'who confirms (recorded with the time)', nonEmptyText)
    .option('--note <text>', 'why you are sure, e.g. "rack 12 PDU off"')
    .option('--yes', 'confirm without being asked')
    .option('--json', 'print JSON')
    .option(
      '--delta-seconds <seconds>',
      'DELTA: a Nova report or heartbeat younger than this means the host runs (default: DELTA of config.yaml at INSTANCEHA_CONFIG_PATH, or its DELTA variable; 30 without one)',
      positiveSeconds,
    )
    .option(
      '--host-is-reporting-override',
      'record the confirmation although Nova or the heartbeat channel shows the host reporting (recorded in the fence record)',
    )
    .action(async (name, options) => {
      const cli = context();
      await confirmFencedCommand(cli, name, { ...options, operator: options.operator ?? cli.operator });
    });

  host
    .command('rehabilitate')
    .description(
      "put a host left FAILED, disabled or forced down back into service, safely: checks the incident and the host's evacuations, lifts forced_down, enables it, closes the incident",
    )
    .argument('<host>', 'the compute host (as Nova names it)')
    .option('--operator <name>', 'who puts it back (recorded as who closed the incident)', nonEmptyText)
    .option('--dry-run', 'check and print the plan; change nothing')
    .option('--yes', 'go ahead without being asked')
    .option(
      '--wait-seconds <seconds>',
      'how long to wait for nova-compute to report up after forced_down is lifted',
      positiveSeconds,
      120,
    )
    .option(
      '--service-down-time <seconds>',
      "Nova's service_down_time: a forced-down service silent for longer is not running",
      positiveSeconds,
      NOVA_SERVICE_DOWN_TIME_SECONDS,
    )
    .option('--json', 'print JSON (progress goes to standard error)')
    .action(async (name, options) => {
      const cli = context();
      await rehabilitate(cli, name, { ...options, operator: options.operator ?? cli.operator });
    });
}
