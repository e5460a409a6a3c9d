// `node --import tsx --conditions=@lifeguard/source test/faults/support/suite-engines-command.ts <directory>`:
// starts the fault suite's RabbitMQ and Redis under <directory> (startSuiteEngines), writes the state
// file named by LIFEGUARD_FAULT_ENGINES_FILE, prints the environment that points the tests at them as
// one JSON line, and exits leaving both engines running (scripts/fault-engines.mjs stops them).
import { startSuiteEngines, suiteEnginesEnvironment } from './suite-engines.ts';

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: suite-engines-command.ts <directory>\n');
  process.exit(64);
}
try {
  const engines = await startSuiteEngines(directory);
  process.stdout.write(`${JSON.stringify(suiteEnginesEnvironment(engines))}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`the fault suite's engines did not start: ${(error as Error).message}\n`);
  process.exit(1);
}
