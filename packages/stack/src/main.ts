#!/usr/bin/env node
import { ConfigError } from '@lifeguard/runtime';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { describeStack } from './banner.ts';
import { type ConsoleProcess, consolePort, freePort, startConsoleProcess } from './console-process.ts';
import {
  BrokerNotReachableError,
  BuildFailedError,
  ForeignStateError,
  StackConfigurationError,
  StateInUseError,
  VhostInUseError,
  WorkerStartError,
  workerStartExitStatus,
} from './errors.ts';
import { ignoredFileVariables, ignoredWorkerVariables } from './ignored-variables.ts';
import { LOG_FORMATS, type LogFormat } from './log-output.ts';
import { parentOf, watchParentProcess, watchProcessGone } from './parent-process.ts';
import { type Stack, startStack } from './stack.ts';
import type { StackOptions } from './stack-options.ts';

/** Exit statuses, as the workers use them (sysexits). */
const EXIT_CONFIG = 78;
const EXIT_UNAVAILABLE = 69;

/** A count that may be 0 (`--restart-attempts`, `--http-port-base`). */
function whole(value: string): number {
  const number = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isInteger(number) || number < 0) {
    throw new InvalidArgumentError('a whole number (0 or more) is expected');
  }
  return number;
}

/** A count of at least 1 (`--ready-timeout`). */
function positive(value: string): number {
  const number = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isInteger(number) || number < 1) {
    throw new InvalidArgumentError('a positive whole number is expected');
  }
  return number;
}

/** A count from 1 to `maximum` (`--hosts`, `--evacuation-workers`: the limits of startStack). */
function positiveUpTo(maximum: number): (value: string) => number {
  return (value) => {
    const number = positive(value);
    if (number > maximum) {
      throw new InvalidArgumentError(`a positive whole number of at most ${maximum} is expected`);
    }
    return number;
  };
}

/** A TCP port, 0 for one the system chooses. */
function port(value: string): number {
  const number = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) {
    throw new InvalidArgumentError('a port number from 0 to 65535 is expected');
  }
  return number;
}

const program = new Command('lifeguard-stack')
  .description(
    'Starts lifeguard on this machine: every worker as its own process against the local RabbitMQ and ' +
      'Redis, and, unless OS_CLOUD names a cloud, cloud-sim as the default cloud.',
  )
  .addOption(
    new Option('--evacuation-workers <count>', 'evacuation-worker processes')
      .env('LIFEGUARD_STACK_EVACUATION_WORKERS')
      .argParser(positiveUpTo(32))
      .default(1),
  )
  .addOption(
    new Option('--hosts <count>', 'simulated compute hosts')
      .env('LIFEGUARD_STACK_HOSTS')
      .argParser(positiveUpTo(1000))
      .default(12),
  )
  .addOption(
    new Option(
      '--http-port-base <port>',
      'health ports from this one upwards, in start order (default: each worker its own); 0: free ports, for cloud-sim too',
    )
      .env('LIFEGUARD_STACK_HTTP_PORT_BASE')
      .argParser(port),
  )
  .addOption(
    new Option('--cloud-sim-port <port>', "cloud-sim's API port")
      .env('LIFEGUARD_STACK_CLOUD_SIM_PORT')
      .argParser(port)
      .default(8780),
  )
  .addOption(
    new Option('--redfish-port <port>', "cloud-sim's Redfish BMC port")
      .env('LIFEGUARD_STACK_REDFISH_PORT')
      .argParser(port)
      .default(8443),
  )
  .addOption(
    new Option(
      '--state-directory <path>',
      'where the generated files go (default .lifeguard in the checkout)',
    ).env('LIFEGUARD_STACK_STATE_DIRECTORY'),
  )
  .addOption(
    new Option('--log-format <format>', 'how worker output is shown')
      .choices(LOG_FORMATS)
      .env('LIFEGUARD_STACK_LOG_FORMAT')
      .default('pretty'),
  )
  .addOption(new Option('--build', 'run turbo run build first (npm start already does)').default(false))
  .addOption(
    new Option(
      '--restart-attempts <count>',
      'times a worker that ended unexpectedly is started again (after 1, 2, 4… s); 0: never',
    )
      .env('LIFEGUARD_STACK_RESTART_ATTEMPTS')
      .argParser(whole)
      .default(5),
  )
  .addOption(
    new Option('--ready-timeout <seconds>', 'how long each worker may take to become ready')
      .env('LIFEGUARD_STACK_READY_TIMEOUT_SECONDS')
      .argParser(positive)
      .default(60),
  )
  .addHelpText(
    'after',
    '\nWith OS_CLOUD set, the stack runs against that cloud with no simulated piece; it then needs\n' +
      'INSTANCEHA_CONFIG_PATH (config.yaml) and FENCING_CONFIG_PATH (fencing.yaml).\n' +
      'Workers also read every LIFEGUARD_* variable of this environment (see docs/operations.md).\n' +
      'Exit status: 78 invalid configuration (an option or LIFEGUARD_STACK_* value, a missing file, ' +
      'a broker refusing the credentials, vhost or database of its URL), 69 RabbitMQ or Redis not ' +
      'reachable, 1 a worker did not start.',
  )
  .exitOverride()
  .configureOutput({
    // `lifeguard cannot start: option '--hosts <count>' argument 'abc' is invalid. ...`, as other
    // configuration errors read.
    outputError: (text, write) => write(`lifeguard cannot start: ${text.replace(/^error: /, '')}`),
  });

try {
  program.parse();
} catch (error) {
  // Help and --version end with 0; any other command-line problem is invalid configuration (its
  // message, naming the option or the LIFEGUARD_STACK_* variable, is already printed).
  process.exit(error instanceof CommanderError && error.exitCode === 0 ? 0 : EXIT_CONFIG);
}
const flags = program.opts<{
  evacuationWorkers: number;
  hosts: number;
  httpPortBase?: number;
  cloudSimPort: number;
  redfishPort: number;
  stateDirectory?: string;
  logFormat: LogFormat;
  build: boolean;
  readyTimeout: number;
  restartAttempts: number;
}>();

const osCloud = process.env.OS_CLOUD;
const freePorts = flags.httpPortBase === 0;
/** cloud-sim's ports: as given, else free ones with --http-port-base 0, else the defaults. */
const simPort = (name: 'cloudSimPort' | 'redfishPort') =>
  freePorts && program.getOptionValueSource(name) === 'default' ? 0 : flags[name];
const options: StackOptions = {
  evacuationWorkers: flags.evacuationWorkers,
  ...(flags.httpPortBase !== undefined ? { httpPorts: freePorts ? 'free' : flags.httpPortBase } : {}),
  ...(flags.stateDirectory ? { stateDirectory: flags.stateDirectory } : {}),
  cloud: osCloud
    ? {
        kind: 'openstack',
        cloudName: osCloud,
        instanceHaConfigPath: process.env.INSTANCEHA_CONFIG_PATH ?? '',
        fencingConfigPath: process.env.FENCING_CONFIG_PATH ?? '',
        ...(process.env.OS_CLIENT_CONFIG_FILE ? { cloudsFile: process.env.OS_CLIENT_CONFIG_FILE } : {}),
      }
    : {
        kind: 'simulated',
        hosts: flags.hosts,
        port: simPort('cloudSimPort'),
        redfishPort: simPort('redfishPort'),
      },
  build: flags.build,
  logFormat: flags.logFormat,
  readyTimeoutSeconds: flags.readyTimeout,
  ...(flags.restartAttempts > 0 ? { restartWorkers: { attempts: flags.restartAttempts } } : {}),
};

let stack: Stack | null = null;
let console_: ConsoleProcess | null = null;
let interrupted = 0;
let starting = true;

// Output to a terminal or pipe that went away (the parent ended) must not end the launcher before it
// stopped its workers.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

/** Stops the stack once (`reason`: the signal, or why), a second time passes SIGTERM to every worker. */
async function shutdown(reason: string): Promise<void> {
  interrupted++;
  if (interrupted > 1) {
    // A second Ctrl-C: pass it on; the workers take a second signal as "exit now".
    for (const worker of stack?.workers ?? []) worker.kill('SIGTERM');
    return;
  }
  if (!stack) {
    if (!starting) process.exit(130);
    process.stderr.write(`\n${reason} while starting: stopping once start-up settles\n`);
    return;
  }
  await console_?.stop();
  await stack.stop();
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => void shutdown(signal));

// `npm start` runs the launcher under `sh -c`: a SIGTERM to npm ends that shell only, and the launcher
// would run on under init with every worker. As the workers watch the launcher, the launcher watches
// its own parent and stops the stack when it is gone; run by npm (npm_lifecycle_event set), it also
// watches npm itself, the shell's parent, since a SIGKILL of npm leaves the shell waiting on it.
const parentPid = process.ppid;
// npm passes a SIGTERM on to its shell and exits, so both ancestors end together: the first one gone
// stops the stack, and a later one (or one gone while a signal already stops it) changes nothing; it
// is not a second Ctrl-C, which would cut the workers' graceful shutdown short.
const stopForGoneAncestor = (pid: number) => () => {
  if (interrupted > 0) return;
  process.stderr.write(`\nthe launcher's parent process (pid ${pid}) ended: stopping lifeguard\n`);
  void shutdown(`the parent process (pid ${pid}) ended`);
};
if (parentPid > 1) {
  watchParentProcess(parentPid, stopForGoneAncestor(parentPid));
  const npmPid = process.env.npm_lifecycle_event ? parentOf(parentPid) : null;
  if (npmPid !== null && npmPid > 1) watchProcessGone(npmPid, stopForGoneAncestor(npmPid));
}

for (const line of [
  ...ignoredFileVariables(process.env, options.cloud?.kind !== 'openstack'),
  ...ignoredWorkerVariables(process.env),
])
  process.stderr.write(`note: ${line}\n`);

try {
  stack = await startStack(options);
  starting = false;
  if (interrupted > 0) {
    await stack.stop();
    process.exit(0);
  }
  // With --log-format json, standard output carries JSON lines only: the banner, for a person, goes
  // to standard error.
  const banner = options.logFormat === 'json' ? process.stderr : process.stdout;
  banner.write(`\n${describeStack(stack)}\n\n`);
  try {
    const port = consolePort(process.env, options.httpPorts ?? 'default', stack.workers.length);
    console_ = await startConsoleProcess(stack, 30, port === 'free' ? await freePort() : port);
    banner.write(`Console: ${console_.url} (lifeguard's web console; see docs/console.md)\n\n`);
  } catch (error) {
    process.stderr.write(`the console did not start (the workers run on): ${(error as Error).message}\n\n`);
  }
} catch (error) {
  starting = false;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof BrokerNotReachableError) {
    process.stderr.write(`\nlifeguard cannot start:\n\n${message}\n`);
    process.exit(EXIT_UNAVAILABLE);
  }
  if (
    error instanceof StackConfigurationError ||
    error instanceof ConfigError ||
    error instanceof ForeignStateError ||
    error instanceof StateInUseError ||
    error instanceof VhostInUseError
  ) {
    process.stderr.write(`\nlifeguard cannot start: ${message}\n`);
    process.exit(EXIT_CONFIG);
  }
  if (error instanceof WorkerStartError || error instanceof BuildFailedError) {
    process.stderr.write(`\nlifeguard did not start: ${message}\n`);
    process.exit(error instanceof WorkerStartError ? workerStartExitStatus(error) : 1);
  }
  process.stderr.write(
    `\nlifeguard did not start: ${error instanceof Error ? (error.stack ?? message) : message}\n`,
  );
  process.exit(1);
}
