import { Command, CommanderError } from '@commander-js/extra-typings';
import { CliContext } from './cli-context.ts';
import { type CliIo, processIo } from './cli-io.ts';
import { registerBlocksCommand } from './commands/blocks.ts';
import { registerDeadLetterCommands } from './commands/dead-letters.ts';
import { registerEventsCommand } from './commands/events.ts';
import { registerHostCommands } from './commands/host.ts';
import { registerHostsCommand } from './commands/hosts.ts';
import { registerIncidentCommands } from './commands/incidents.ts';
import { registerSimCommands } from './commands/sim.ts';
import { registerStatusCommand } from './commands/status.ts';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './errors.ts';

/** The version `lifeguard --version` prints. */
export const CLI_VERSION = '0.1.0';

/** Gives a command its CliContext, created on first use (after the global options are parsed). */
export type ContextProvider = () => CliContext;

/**
 * Builds the `lifeguard` program. Commander's own output (help, usage errors) goes to `io`, and it
 * never exits the process: errors are thrown to `runCli`, which turns them into exit statuses.
 */
export function createProgram(io: CliIo, context: ContextProvider): Command<[], { verbose?: true }> {
  const program = new Command()
    .name('lifeguard')
    .description(
      'Operate lifeguard: workers, leader and queues, compute hosts and incidents, provisioning blocks, ' +
        'dead letters, operator fencing confirmation, host rehabilitation, and cloud-sim faults. ' +
        'Reads the same LIFEGUARD_* variables as the workers, and clouds.yaml / OS_* for Nova.',
    )
    .version(CLI_VERSION)
    .option('--verbose', 'log connection and API details to standard error')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride();
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

function describeError(error: unknown, verbose: boolean): string {
  if (!(error instanceof Error)) return String(error);
  if (verbose && !(error instanceof CliError) && error.stack) return error.stack;
  return error.message;
}

/**
 * Runs the command line `argv` (without the program name) and resolves with the exit status:
 * 0 ok, 1 failure (the reason on standard error as `lifeguard: <reason>`), 2 usage error.
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
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    if (error instanceof UsageError) {
      io.stderr.write(`lifeguard: ${error.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`lifeguard: ${describeError(error, verbose)}\n`);
    if (error instanceof CliError) for (const hint of error.hints) io.stderr.write(`  ${hint}\n`);
    return EXIT_FAILURE;
  } finally {
    await (context as CliContext | null)?.close();
  }
}
