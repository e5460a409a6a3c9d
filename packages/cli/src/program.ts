import { Command, CommanderError } from '@commander-js/extra-typings';
import { OperatorError } from '@lifeguard/operator-actions';
import { CliContext } from './cli-context.ts';
import { type CliIo, processIo } from './cli-io.ts';
import type { ContextProvider, LifeguardProgram } from './command-registration.ts';
import { registerBlocksCommand } from './commands/blocks.ts';
import { registerDeadLetterCommands } from './commands/dead-letters.ts';
import { registerEventsCommand } from './commands/events.ts';
import { registerHostCommands } from './commands/host.ts';
import { registerHostsCommand } from './commands/hosts.ts';
import { registerIncidentCommands } from './commands/incidents.ts';
import { registerSimCommands } from './commands/sim.ts';
import { registerStatusCommand } from './commands/status.ts';
import { ConfirmationRequiredError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './errors.ts';

/** The version `lifeguard --version` prints. */
export const CLI_VERSION = '0.1.0';

/**
 * Builds the `lifeguard` program. Commander's own output (help, usage errors) goes to `io`, and it
 * never exits the process: errors are thrown to `runCli`, which turns them into exit statuses.
 */
export function createProgram(io: CliIo, context: ContextProvider): LifeguardProgram {
  const program = new Command()
    .name('lifeguard')
    .description(
      'Operate lifeguard: workers, leader and queues, compute hosts and incidents, provisioning blocks, ' +
        'dead letters, operator fencing confirmation, host rehabilitation, and cloud-sim faults. ' +
        'Reads the same LIFEGUARD_* variables as the workers, and clouds.yaml / OS_* for Nova.',
    )
    .version(CLI_VERSION)
    .option('--verbose', 'log connection and API details to standard error')
    .showHelpAfterError(USAGE_HINT)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // Every error reads `lifeguard: <reason>`, commander's usage errors too.
      outputError: (text, write) => write(`${ERROR_PREFIX} ${usageMessage(text)}`),
    })
    .exitOverride()
    .hook('preAction', (_program, command) => refuseEmptyValues(command));
  registerStatusCommand(program, context);
  registerHostsCommand(program, context);
  registerIncidentCommands(program, context);
  registerEventsCommand(program, context);
  registerBlocksCommand(program, context);
  registerDeadLetterCommands(program, context);
  registerHostCommands(program, context);
  registerSimCommands(program, context);
  program.addHelpText(
    'after',
    '\nExit status: 0 ok, 1 the command failed, 2 wrong usage (or a destructive command not confirmed).',
  );
  return program;
}

/** What starts every error line on standard error. */
const ERROR_PREFIX = 'lifeguard:';

/** What follows a usage error, commander's or lifeguard's own. */
const USAGE_HINT = '(run with --help for usage)';

/**
 * A commander usage error in lifeguard's words: without `error: `, and an invalid argument said as
 * `<count> "0": must be a whole number ≥ 1` rather than commander's `command-argument value '0' is
 * invalid for argument 'count'. must be ...`.
 */
function usageMessage(text: string): string {
  return text
    .replace(/^error: /, '')
    .replace(/^command-argument value '(.*)' is invalid for argument '(.+?)'\. /s, '<$2> "$1": ');
}

/**
 * Refuses an argument or option value that is empty or blank (`blocks ''`, `--id ''`), naming it, before
 * the command connects to anything.
 * @throws UsageError `argument 'host' must not be empty` / `option '--id <id...>' must not be empty`
 */
function refuseEmptyValues(command: Command<unknown[], Record<string, unknown>>): void {
  const blank = (value: unknown): boolean =>
    (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.some(blank));
  command.registeredArguments.forEach((argument, index) => {
    if (blank(command.processedArgs[index])) {
      throw new UsageError(`argument '${argument.name()}' must not be empty`);
    }
  });
  for (const option of command.options) {
    if (blank(command.getOptionValue(option.attributeName()))) {
      throw new UsageError(`option '${option.flags}' must not be empty`);
    }
  }
}

function describeError(error: unknown, verbose: boolean): string {
  if (!(error instanceof Error)) return String(error);
  if (verbose && !(error instanceof OperatorError) && error.stack) return error.stack;
  return error.message;
}

/**
 * Runs the command line `argv` (without the program name) and resolves with the exit status:
 * 0 ok, 1 failure (the reason on standard error as `lifeguard: <reason>`), 2 usage error (also
 * `lifeguard: <reason>`). With `--json`, a failure is also printed on standard output as
 * `{"error": {"message", "hints", "exitStatus"}}`, unless the command already printed its JSON.
 * Connections opened by the command are closed before it resolves.
 */
export async function runCli(argv: ReadonlyArray<string>, io: CliIo = processIo()): Promise<number> {
  let context: CliContext | null = null;
  let verbose = false;
  const program = createProgram(io, () => {
    verbose = program.opts().verbose === true;
    context ??= new CliContext(io, { verbose });
    return context;
  });
  const failed = (exitStatus: number, message: string, hints: ReadonlyArray<string>): number => {
    if (argv.includes('--json') && !(context as CliContext | null)?.printedJson) {
      io.stdout.write(`${JSON.stringify({ error: { message, hints, exitStatus } }, null, 2)}\n`);
    }
    return exitStatus;
  };
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return EXIT_OK;
      return failed(EXIT_USAGE, usageMessage(error.message), []);
    }
    if (error instanceof UsageError) {
      io.stderr.write(`${ERROR_PREFIX} ${error.message}\n`);
      if (!(error instanceof ConfirmationRequiredError)) io.stderr.write(`${USAGE_HINT}\n`);
      return failed(EXIT_USAGE, error.message, []);
    }
    io.stderr.write(`${ERROR_PREFIX} ${describeError(error, verbose)}\n`);
    const hints = error instanceof OperatorError ? error.hints : [];
    for (const hint of hints) io.stderr.write(`  ${hint}\n`);
    return failed(EXIT_FAILURE, error instanceof Error ? error.message : String(error), hints);
  } finally {
    await (context as CliContext | null)?.close();
  }
}
