import { execFile } from 'node:child_process';
import { ConfigError } from '@lifeguard/runtime';

/** The variable that names the virsh program. */
export const VIRSH_VARIABLE = 'LIFEGUARD_INSTANCE_MONITOR_VIRSH';

/** How long `virsh --version` may take (it reads no libvirt connection). */
const VERSION_TIMEOUT_MILLISECONDS = 10_000;

/** What running `<virsh> --version` gave: its version, or why it could not be run. */
type VersionResult = { version: string } | { problem: string };

/** Runs `<virsh> --version`, which needs no libvirtd, and says what it gave. */
function runVersion(virsh: string, env: NodeJS.ProcessEnv): Promise<VersionResult> {
  return new Promise((resolve) => {
    execFile(
      virsh,
      ['--version'],
      { env, timeout: VERSION_TIMEOUT_MILLISECONDS, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ version: stdout.trim() });
        const { code, killed } = error as NodeJS.ErrnoException & { killed?: boolean };
        if (code === 'ENOENT')
          return resolve({
            problem: virsh.includes('/') ? 'no such file' : `not found on PATH (${env.PATH ?? ''})`,
          });
        if (code === 'EACCES') return resolve({ problem: 'not executable (permission denied)' });
        if (killed)
          return resolve({
            problem: `\`--version\` did not end within ${VERSION_TIMEOUT_MILLISECONDS / 1000} s`,
          });
        const said = (stderr || stdout).trim().split('\n')[0] ?? '';
        resolve({ problem: `\`--version\` failed (exit status ${String(code)})${said ? `: ${said}` : ''}` });
      },
    );
  });
}

/**
 * Checks at start-up that the configured virsh can be run (`virsh --version`), so that a monitor
 * given a virsh that is not there stops at once instead of retrying for ever; a virsh that ends
 * later, while libvirtd restarts, is still started again with backoff (InstanceMonitor).
 * @returns virsh's version
 * @throws ConfigError naming LIFEGUARD_INSTANCE_MONITOR_VIRSH, the program and why it cannot be run
 */
export async function checkVirsh(virsh: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const result = await runVersion(virsh, env);
  if ('version' in result) return result.version;
  throw new ConfigError([
    {
      key: VIRSH_VARIABLE,
      source: env[VIRSH_VARIABLE] === undefined ? 'default' : 'environment',
      problem: `${virsh} cannot be run: ${result.problem} (virsh is in Debian's libvirt-clients; set ${VIRSH_VARIABLE} to its path)`,
      value: JSON.stringify(virsh),
    },
  ]);
}
