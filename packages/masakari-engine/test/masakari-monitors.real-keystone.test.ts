// Masakari's own monitor driving lifeguard: Debian's masakari-processmonitor watches a process named
// nova-compute that the test starts and kills, and posts its PROCESS notification through
// openstacksdk, with a Keystone token of the real-Nova harness, to lifeguard's Masakari API (registered
// in the catalog as type instance-ha); the Masakari engine, as a process of its own, disables the
// host's compute service in Nova. Debian's `openstack notification create` then sends the STARTED that
// enables it again. The monitor reports `socket.gethostname()`, so it runs in a UTS namespace named
// after the harness's compute host.
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseDisabledReason } from '@lifeguard/instance-ha';
import { waitFor } from '@lifeguard/testing';
import { openstack } from '../../masakari-api/test/support/openstack-cli.ts';
import { masakariMonitorsStack } from './support/masakari-monitors-stack.ts';

const stack = masakariMonitorsStack('masakari-monitors');
const { cloud, cli, directory, host, guestHost } = stack;
/** The notification whose payload has `event`, once its status is final. */
const finished = (event: string) =>
  stack.finished(`a notification with event ${event}`, (each) => each.payload.event === event);

describe('Masakari processmonitor → lifeguard Masakari API → Masakari engine → Nova', () => {
  it('nova-compute stopped: the monitor reports it and the compute service is disabled; a STARTED from openstack notification create enables it', async () => {
    // The watched "nova-compute": a process of its own, found by its path in `ps -ef`.
    const watched = join(directory, 'nova-compute');
    writeFileSync(watched, '#!/bin/sh\nexec sleep 3600\n');
    chmodSync(watched, 0o755);
    const { child: process_ } = stack.start('nova-compute', '/bin/sh', [watched], { PATH: process.env.PATH });
    writeFileSync(
      join(directory, 'process_list.yaml'),
      `-\n    process_name: ${watched}\n    start_command: /bin/true\n    pre_start_command:\n    post_start_command:\n    restart_command: /bin/false\n    pre_restart_command:\n    post_restart_command:\n    run_as_root: False\n`,
    );
    const config = stack.writeMonitorConfig('processmonitor.conf', [
      '[process]',
      'check_interval = 1',
      'restart_retries = 0',
      'restart_interval = 1',
      'api_retry_max = 5',
      'api_retry_interval = 2',
      `process_list_path = ${join(directory, 'process_list.yaml')}`,
    ]);
    const monitorLog = stack.startMonitor('masakari-processmonitor', host, config);
    await waitFor(
      'the monitor to find the process',
      () => /is found|Start of process/.test(monitorLog.join('')),
      60_000,
      200,
    ).catch(() => undefined);
    process_.kill('SIGKILL');

    const stopped = await finished('STOPPED');
    assert.equal(stopped.type, 'PROCESS');
    assert.deepEqual(stopped.payload, { event: 'STOPPED', process_name: 'nova-compute' });
    assert.equal(stopped.status, 'finished', JSON.stringify(stopped.recoveryWorkflowDetails));
    const disabled = await cloud.service(host);
    const marker = parseDisabledReason(disabled.disabled_reason);
    assert.deepEqual(
      [disabled.status, marker.kind, marker.origin],
      ['disabled', 'process-stopped', 'lifeguard'],
    );
    assert.equal(disabled.forced_down, false, 'nothing fenced');

    const sent = await openstack(
      [
        [
          'notification',
          'create',
          'PROCESS',
          host,
          new Date().toISOString().replace('Z', ''),
          JSON.stringify({ event: 'STARTED', process_name: 'nova-compute' }),
          '-f',
          'json',
        ],
      ],
      cli,
    );
    assert.equal(sent.documents.length, 1, sent.stderr);
    const started = await finished('STARTED');
    assert.equal(started.status, 'finished');
    assert.equal((await cloud.service(host)).status, 'enabled');
  });

  it('a compute service an operator disabled is neither marked on STOPPED nor enabled on STARTED', async () => {
    await cloud.updateService(host, { status: 'disabled', disabled_reason: 'maintenance window' });
    const known = new Set((await stack.notifications()).map((each) => each.id));
    const time = () => new Date().toISOString().replace('Z', '');
    const sent = await openstack(
      ['STOPPED', 'STARTED'].map((event) => [
        'notification',
        'create',
        'PROCESS',
        host,
        time(),
        JSON.stringify({ event, process_name: 'nova-compute' }),
        '-f',
        'json',
      ]),
      cli,
    );
    assert.equal(sent.documents.length, 2, sent.stderr);
    for (const event of ['STOPPED', 'STARTED']) {
      const record = await waitFor(
        `the operator case's ${event} processed`,
        async () =>
          (await stack.notifications()).find(
            (each) => !known.has(each.id) && each.payload.event === event && each.status === 'finished',
          ),
        90_000,
        200,
      );
      assert.equal(record.recoveryWorkflowDetails[0]?.state, 'SKIPPED');
    }
    const after = await cloud.service(host);
    assert.deepEqual([after.status, after.disabled_reason], ['disabled', 'maintenance window']);
    await cloud.updateService(host, { status: 'enabled' });
  });

  it('a crashed guest: the VM notification (instancemonitor body) through openstack notification create gets it ACTIVE again', async (t) => {
    const id = await stack.guest();
    const reset = await cloud.nova('POST', `/servers/${id}/action`, { 'os-resetState': { state: 'error' } });
    assert.equal(reset.status, 202);
    const crashedAt = Date.now();
    // masakari-instancemonitor's payload for a guest that crashed (eventfilter_table: LIFECYCLE, STOPPED_FAILED).
    const payload = { event: 'LIFECYCLE', instance_uuid: id, vir_domain_event: 'STOPPED_FAILED' };
    const sent = await openstack(
      [
        [
          'notification',
          'create',
          'VM',
          guestHost,
          new Date().toISOString().replace('Z', ''),
          JSON.stringify(payload),
          '-f',
          'json',
        ],
      ],
      cli,
    );
    assert.equal(sent.documents.length, 1, sent.stderr);
    const record = await finished('LIFECYCLE');
    assert.equal(record.status, 'finished', JSON.stringify(record.recoveryWorkflowDetails));
    assert.deepEqual(
      record.recoveryWorkflowDetails.map((detail) => [detail.name, detail.state]),
      [['InstanceRestartTask', 'SUCCESS']],
    );
    assert.equal((await cloud.server(id)).status, 'ACTIVE');
    t.diagnostic(
      `guest crash → notification finished, guest ACTIVE: ${Date.now() - crashedAt} ms (load ${loadavg()[0]!.toFixed(1)})`,
    );
  });
});
