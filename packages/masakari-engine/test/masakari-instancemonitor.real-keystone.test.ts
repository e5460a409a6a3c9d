// Masakari's own instance monitor driving lifeguard: Debian's masakari-instancemonitor (14.0.0) watches
// a private libvirtd serving libvirt's test driver (its `[libvirt] connection_uri`), in a UTS namespace
// named after the compute host of an HA_Enabled guest of the real-Nova harness. A test-driver domain
// with the guest's uuid is destroyed by another client; the monitor's VM notification goes through the
// harness's Keystone to lifeguard's Masakari API, and the Masakari engine gives it Masakari's status.
//
// The test driver cannot make a domain fail: its destroy gives STOPPED_DESTROYED, shutdown
// STOPPED_SHUTDOWN and SHUTDOWN_FINISHED, `virsh dump --crash` STOPPED_CRASHED (which the monitor's
// filter drops), and it has no I/O error events. Masakari restarts a guest only on LIFECYCLE
// STOPPED_FAILED, QEMU_GUEST_AGENT_ERROR STOPPED_FAILED and IO_ERROR IO_ERROR_REPORT
// (masakari/engine/instance_events.py), so what the real monitor can be made to send here is one that
// Masakari ignores: the guest is left alone. The restart on STOPPED_FAILED is run with the monitor's
// body in masakari-monitors.real-keystone.test.ts.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import {
  LIBVIRTD,
  type PrivateLibvirtd,
  startPrivateLibvirtd,
} from '../../instance-restart-worker/test/support/private-libvirtd.ts';
import { masakariMonitorsStack } from './support/masakari-monitors-stack.ts';

const stack = masakariMonitorsStack('masakari-instancemonitor');
const { cloud, directory, guestHost } = stack;
let libvirtd: PrivateLibvirtd;

before(async () => {
  assert.ok(existsSync(LIBVIRTD), 'libvirtd is installed (Debian package libvirt-daemon)');
  assert.ok(
    existsSync('/usr/bin/masakari-instancemonitor'),
    'masakari-instancemonitor is installed (Debian package masakari-instance-monitor)',
  );
  libvirtd = await startPrivateLibvirtd();
});

after(async () => {
  await libvirtd?.stop();
});

/**
 * A test-driver domain named `name` with the server's uuid, defined and started by a `virsh` that then
 * stays connected (`event --all --loop`, its output in the stack's logs). The test driver keeps its
 * domains only while a connection is open: defining them on the connection that holds them leaves no
 * moment when none is open, however slowly that connection comes up.
 */
async function startHeldDomain(name: string, uuid: string): Promise<void> {
  const xml = join(directory, `${name}.xml`);
  writeFileSync(
    xml,
    `<domain type='test'><name>${name}</name><uuid>${uuid}</uuid><memory>65536</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>\n`,
  );
  stack.start(
    'virsh event',
    'virsh',
    ['-c', libvirtd.uri, `define ${xml}; start ${name}; event --all --loop`],
    { PATH: process.env.PATH },
  );
  await waitFor(
    `the domain ${name} running`,
    async () => (await libvirtd.virsh('domstate', name).catch(() => '')).trim() === 'running',
    60_000,
    200,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${stack.logs()}`);
  });
}

describe('Masakari instancemonitor → lifeguard Masakari API → Masakari engine', () => {
  it('a destroyed domain with an HA_Enabled server’s uuid: the monitor’s VM notification (LIFECYCLE, STOPPED_DESTROYED) is stored and ends ignored, the server left ACTIVE', async () => {
    const id = await stack.guest();
    await waitFor('the guest ACTIVE', async () => (await cloud.server(id)).status === 'ACTIVE', 120_000, 500);
    await startHeldDomain('instance-guest', id);
    const config = stack.writeMonitorConfig('instancemonitor.conf', [
      '[libvirt]',
      `connection_uri = ${libvirtd.uri}`,
      '[callback]',
      'retry_max = 5',
      'retry_interval = 2',
    ]);
    const monitorLog = stack.startMonitor('masakari-instancemonitor', guestHost, config);
    const ofGuest = async () =>
      (await stack.notifications()).filter((each) => each.payload.instance_uuid === id);
    // The monitor subscribes once it has connected: destroy (and start again) until its report arrives.
    await waitFor(
      'the monitor to report the destroy',
      async () => {
        if ((await ofGuest()).length > 0) return true;
        await libvirtd.virsh('destroy instance-guest; start instance-guest').catch(() => undefined);
        return false;
      },
      60_000,
      2000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${stack.logs()}`);
    });

    const record = await stack.finished(
      'the monitor’s notification',
      (each) => each.payload.instance_uuid === id && each.payload.vir_domain_event === 'STOPPED_DESTROYED',
    );
    assert.equal(record.type, 'VM');
    assert.equal((await stack.store().getHost(record.sourceHostUuid))?.name, guestHost);
    assert.deepEqual(record.payload, {
      event: 'LIFECYCLE',
      instance_uuid: id,
      vir_domain_event: 'STOPPED_DESTROYED',
    });
    // The monitor logs the API's answer, with the uuid lifeguard gave the notification.
    assert.match(monitorLog.join(''), new RegExp(`Response: .*${record.notificationUuid}`));
    assert.equal(record.status, 'ignored', JSON.stringify(record.recoveryWorkflowDetails));
    for (const each of await ofGuest())
      assert.equal(each.payload.vir_domain_event, 'STOPPED_DESTROYED', JSON.stringify(each.payload));
    assert.equal((await cloud.server(id)).status, 'ACTIVE');
  });
});
