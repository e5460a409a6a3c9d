// Runs Debian's `openstack` client (python3-openstackclient with python3-masakariclient's plugin) in
// its interactive mode: one process runs a list of commands read from stdin, which saves a Python
// start-up per command. Its interactive shell splits each line twice (cmd2, then cliff), so every
// argument is quoted twice.
import { spawn } from 'node:child_process';

/** Python's shlex.quote. */
export function shellQuote(argument: string): string {
  if (argument !== '' && /^[\w@%+=:,./-]+$/.test(argument)) return argument;
  return `'${argument.replaceAll("'", `'"'"'`)}'`;
}

/** One command line of the interactive shell. */
export const interactiveLine = (argv: ReadonlyArray<string>): string =>
  argv.map((argument) => shellQuote(shellQuote(argument))).join(' ');

/** The JSON documents printed one after the other by `-f json` commands. */
export function jsonDocuments(stdout: string): unknown[] {
  const documents: unknown[] = [];
  let pending: string[] = [];
  for (const line of stdout.split('\n')) {
    if (pending.length === 0 && !/^[[{]/.test(line)) continue;
    pending.push(line);
    if (/^[\]}]$/.test(line) || line === '[]' || line === '{}') {
      documents.push(JSON.parse(pending.join('\n')));
      pending = [];
    }
  }
  return documents;
}

export interface CliRun {
  documents: unknown[];
  stderr: string;
  stdout: string;
}

/** Runs the commands in one `/usr/bin/openstack` process with `env` (OS_CLIENT_CONFIG_FILE, OS_CLOUD). */
export function openstack(
  commands: ReadonlyArray<ReadonlyArray<string>>,
  env: NodeJS.ProcessEnv,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/openstack', [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', () => resolve({ documents: jsonDocuments(stdout), stderr, stdout }));
    child.stdin.end(`${commands.map(interactiveLine).join('\n')}\n`);
  });
}
