import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@lifeguard/testing';

const run = promisify(execFile);
export const LIBVIRTD = '/usr/sbin/libvirtd';

/**
 * A private libvirtd (Debian package libvirt-daemon) serving libvirt's test driver on a socket of its
 * own. Through one daemon every connection to `test:///default` shares the same domains, so a
 * domain event caused by one client (`virsh destroy test`) reaches another client's `virsh event`,
 * as events on a compute host's libvirtd do. No hypervisor driver module is loaded
 * (LIBVIRT_DRIVER_DIR points at an empty directory): the test driver is part of libvirt itself.
 */
export interface PrivateLibvirtd {
  /** `test+unix:///default?socket=<socket>`. */
  readonly uri: string;
  virsh(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startPrivateLibvirtd(): Promise<PrivateLibvirtd> {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-libvirtd-'));
  const sockets = join(directory, 'sock');
  const drivers = join(directory, 'no-drivers');
  mkdirSync(sockets);
  mkdirSync(drivers);
  const config = join(directory, 'libvirtd.conf');
  writeFileSync(
    config,
    [
      `unix_sock_dir = "${sockets}"`,
      'unix_sock_rw_perms = "0700"',
      'auth_unix_rw = "none"',
      'auth_unix_ro = "none"',
      `log_outputs = "3:file:${join(directory, 'libvirtd.log')}"`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(LIBVIRTD, ['-f', config, '-p', join(directory, 'libvirtd.pid')], {
    env: { ...process.env, LIBVIRT_DRIVER_DIR: drivers },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const socket = join(sockets, 'libvirt-sock');
  const uri = `test+unix:///default?socket=${socket}`;
  const virsh = async (...args: string[]) =>
    (await run('virsh', ['-c', uri, ...args], { timeout: 30_000 })).stdout;
  await waitFor('libvirtd to listen', () => existsSync(socket), 30_000, 50);
  await waitFor(
    'the test driver to answer',
    async () => (await virsh('list', '--all').catch(() => '')).includes('test'),
    30_000,
    100,
  );
  return {
    uri,
    virsh,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
