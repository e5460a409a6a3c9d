import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MonitorReportVerdict } from '@lifeguard/instance-ha';
import {
  hostFailureStatus,
  instanceRestartStatus,
  notificationAction,
  recoveryPlan,
  statusAfterAttempt,
  usedReservedHost,
} from '../src/index.ts';

const INSTANCE = '1f4c9a3e-55d2-4f0a-9a34-6a1c1c2f7d10';

describe('notificationAction: which notifications act (docs/migrating-from-masakari.md)', () => {
  const table: Array<{
    name: string;
    type: 'COMPUTE_HOST' | 'VM' | 'PROCESS';
    payload: Record<string, string>;
    segmentEnabled?: boolean;
    kind: string;
  }> = [
    {
      name: 'host stopped, NORMAL',
      type: 'COMPUTE_HOST',
      payload: { event: 'STOPPED', host_status: 'NORMAL', cluster_status: 'OFFLINE' },
      kind: 'host-failure',
    },
    {
      name: 'host stopped, host_status in lower case',
      type: 'COMPUTE_HOST',
      payload: { event: 'stopped', host_status: 'normal' },
      kind: 'host-failure',
    },
    {
      name: 'host stopped, UNKNOWN (IPMI could not confirm)',
      type: 'COMPUTE_HOST',
      payload: { event: 'STOPPED', host_status: 'UNKNOWN' },
      kind: 'ignore',
    },
    {
      name: 'host stopped, no host_status',
      type: 'COMPUTE_HOST',
      payload: { event: 'STOPPED' },
      kind: 'ignore',
    },
    {
      name: 'host started',
      type: 'COMPUTE_HOST',
      payload: { event: 'STARTED', host_status: 'NORMAL', cluster_status: 'ONLINE' },
      kind: 'finish',
    },
    {
      name: 'segment disabled',
      type: 'COMPUTE_HOST',
      payload: { event: 'STOPPED', host_status: 'NORMAL' },
      segmentEnabled: false,
      kind: 'ignore',
    },
    {
      name: 'guest crashed (LIFECYCLE/STOPPED_FAILED)',
      type: 'VM',
      payload: { event: 'LIFECYCLE', vir_domain_event: 'STOPPED_FAILED', instance_uuid: INSTANCE },
      kind: 'instance-restart',
    },
    {
      name: 'guest agent silent (QEMU_GUEST_AGENT_ERROR/STOPPED_FAILED)',
      type: 'VM',
      payload: {
        event: 'QEMU_GUEST_AGENT_ERROR',
        vir_domain_event: 'STOPPED_FAILED',
        instance_uuid: INSTANCE,
      },
      kind: 'instance-restart',
    },
    {
      name: 'I/O error (IO_ERROR/IO_ERROR_REPORT)',
      type: 'VM',
      payload: { event: 'IO_ERROR', vir_domain_event: 'IO_ERROR_REPORT', instance_uuid: INSTANCE },
      kind: 'instance-restart',
    },
    {
      name: "a user's virsh destroy (STOPPED_DESTROYED)",
      type: 'VM',
      payload: { event: 'LIFECYCLE', vir_domain_event: 'STOPPED_DESTROYED', instance_uuid: INSTANCE },
      kind: 'ignore',
    },
    {
      name: 'a guest shut down (STOPPED_SHUTDOWN)',
      type: 'VM',
      payload: { event: 'LIFECYCLE', vir_domain_event: 'STOPPED_SHUTDOWN', instance_uuid: INSTANCE },
      kind: 'ignore',
    },
    {
      name: 'nova-compute stopped',
      type: 'PROCESS',
      payload: { event: 'STOPPED', process_name: 'nova-compute' },
      kind: 'disable-compute-service',
    },
    {
      name: 'nova-compute started',
      type: 'PROCESS',
      payload: { event: 'STARTED', process_name: 'nova-compute' },
      kind: 'enable-compute-service',
    },
    {
      name: 'another process stopped',
      type: 'PROCESS',
      payload: { event: 'STOPPED', process_name: 'libvirtd' },
      kind: 'finish',
    },
    {
      name: 'another process started',
      type: 'PROCESS',
      payload: { event: 'STARTED', process_name: 'libvirtd' },
      kind: 'finish',
    },
    {
      name: 'nova-compute stopped, segment disabled',
      type: 'PROCESS',
      payload: { event: 'STOPPED', process_name: 'nova-compute' },
      segmentEnabled: false,
      kind: 'ignore',
    },
  ];
  for (const row of table)
    it(row.name, () => {
      const action = notificationAction({
        type: row.type,
        payload: row.payload,
        segmentEnabled: row.segmentEnabled ?? true,
      });
      assert.equal(action.kind, row.kind);
    });

  it('a restart carries the instance and its event, upper case', () => {
    assert.deepEqual(
      notificationAction({
        type: 'VM',
        payload: { event: 'lifecycle', vir_domain_event: 'stopped_failed', instance_uuid: INSTANCE },
        segmentEnabled: true,
      }),
      {
        kind: 'instance-restart',
        instanceId: INSTANCE,
        event: 'LIFECYCLE',
        virDomainEvent: 'STOPPED_FAILED',
      },
    );
  });
});

describe('hostFailureStatus: a COMPUTE_HOST notification follows the verdict and the incident', () => {
  const at = '2026-12-07T02:00:00.000Z';
  const admitted: MonitorReportVerdict = {
    verdict: 'admitted',
    host: 'compute1',
    incidentId: 'inc-1',
    reason: 'admitted',
    at,
  };
  const refused: MonitorReportVerdict = {
    verdict: 'refused',
    host: 'compute1',
    gate: null,
    reason: 'nova-compute reported after the report',
    at,
  };
  const fence = { proof: 'power-off-confirmed' } as never;
  const incident = (state: string, fenced: boolean, outcome: string | null = null) =>
    ({ id: 'inc-1', state, fence: fenced ? fence : null, outcome }) as never;
  const table: Array<{
    name: string;
    verdict: MonitorReportVerdict | null;
    incident: never | null;
    status: string;
  }> = [
    { name: 'not judged yet', verdict: null, incident: null, status: 'running' },
    { name: 'refused by the report rule (host alive)', verdict: refused, incident: null, status: 'ignored' },
    {
      name: 'refused by a gate',
      verdict: { ...refused, gate: 'heartbeat' } as MonitorReportVerdict,
      incident: null,
      status: 'ignored',
    },
    {
      name: 'refused: no servers on the host (Masakari finishes it)',
      verdict: { ...refused, gate: 'not-evacuable', reason: 'no-servers' },
      incident: null,
      status: 'finished',
    },
    {
      name: 'refused: no evacuable server',
      verdict: { ...refused, gate: 'not-evacuable', reason: 'no-evacuable-servers' },
      incident: null,
      status: 'ignored',
    },
    {
      name: 'admitted, incident open',
      verdict: admitted,
      incident: incident('open', false),
      status: 'running',
    },
    { name: 'admitted, fencing', verdict: admitted, incident: incident('fencing', false), status: 'running' },
    {
      name: 'admitted, evacuating',
      verdict: admitted,
      incident: incident('evacuating', true),
      status: 'running',
    },
    {
      name: 'admitted, evacuated',
      verdict: admitted,
      incident: incident('evacuated', true),
      status: 'finished',
    },
    {
      name: 'admitted, re-enabled and closed',
      verdict: admitted,
      incident: incident('closed', true, 'reenabled'),
      status: 'finished',
    },
    {
      name: 'admitted, failed',
      verdict: admitted,
      incident: incident('failed', true, 'evacuation failed'),
      status: 'error',
    },
    {
      name: 'admitted, closed before any fence (the host came back)',
      verdict: admitted,
      incident: incident('closed', false, 'recovered'),
      status: 'ignored',
    },
  ];
  for (const row of table)
    it(row.name, () => assert.equal(hostFailureStatus(row.verdict, row.incident).status, row.status));

  it('a failed incident whose evacuation was refused for want of a reserved host says so, in Masakari words', () => {
    const refusedPlacement = { refused: true, reason: 'compute3: its compute service is down' };
    const failed = incident('failed', true, 'evacuation failed');
    assert.deepEqual(hostFailureStatus(admitted, failed, refusedPlacement), {
      status: 'error',
      reason:
        'incident inc-1: No reserved_hosts available for evacuation: compute3: its compute service is down',
    });
    assert.match(
      hostFailureStatus(admitted, failed, { refused: false, reason: 'reserved host compute3' }).reason,
      /^incident inc-1 failed: evacuation failed$/,
    );
  });
});

describe('instanceRestartStatus and statusAfterAttempt', () => {
  const table = [
    { outcome: 'restarted', status: 'finished' },
    { outcome: 'ignored', status: 'ignored' },
    { outcome: 'failed', status: 'error' },
    { outcome: 'given-up', status: 'failed' },
  ] as const;
  for (const row of table)
    it(`${row.outcome} → ${row.status}`, () =>
      assert.equal(instanceRestartStatus({ outcome: row.outcome, reason: 'r' }).status, row.status));

  it("the restart worker's own Masakari status wins: an instance without HA_Enabled is finished, as in Masakari", () =>
    assert.equal(
      instanceRestartStatus({
        outcome: 'ignored',
        reason: 'not HA_Enabled=True in its metadata',
        notificationStatus: 'finished',
      }).status,
      'finished',
    ));

  it('an error is retried once, then failed; other statuses stay', () => {
    assert.equal(statusAfterAttempt('error', false), 'error');
    assert.equal(statusAfterAttempt('error', true), 'failed');
    assert.equal(statusAfterAttempt('finished', true), 'finished');
    assert.equal(statusAfterAttempt('ignored', false), 'ignored');
  });
});

describe('recoveryPlan: a segment recovery_method on lifeguard (docs/migrating-from-masakari.md#recovery-methods)', () => {
  const host = (name: string, id: number, createdAt: string, reserved = true, onMaintenance = false) => ({
    name,
    id,
    createdAt,
    reserved,
    onMaintenance,
  });
  const hosts = [
    host('compute1', 1, '2026-12-01T00:00:00.000000', false),
    host('compute2', 2, '2026-12-01T00:00:00.000000'),
    host('compute3', 3, '2026-12-02T00:00:00.000000', true, true),
    host('compute4', 4, '2026-12-03T00:00:00.000000'),
    host('compute5', 5, '2026-12-01T00:00:00.000000'),
  ];
  const table: Array<{
    method: 'auto' | 'reserved_host' | 'auto_priority' | 'rh_priority';
    hosts: typeof hosts;
    order: string[];
    reservedHosts: string[];
    note: RegExp | null;
  }> = [
    { method: 'auto', hosts, order: ['scheduler'], reservedHosts: [], note: null },
    {
      method: 'reserved_host',
      hosts,
      order: ['reserved-host'],
      reservedHosts: ['compute4', 'compute5', 'compute2'],
      note: null,
    },
    {
      method: 'auto_priority',
      hosts,
      order: ['scheduler', 'reserved-host'],
      reservedHosts: ['compute4', 'compute5', 'compute2'],
      note: null,
    },
    {
      method: 'rh_priority',
      hosts,
      order: ['reserved-host', 'scheduler'],
      reservedHosts: ['compute4', 'compute5', 'compute2'],
      note: null,
    },
    {
      method: 'reserved_host',
      hosts: hosts.slice(0, 1),
      order: ['reserved-host'],
      reservedHosts: [],
      note: /nothing will be evacuated \(No reserved_hosts available for evacuation\)/,
    },
    {
      method: 'rh_priority',
      hosts: hosts.slice(0, 3),
      order: ['reserved-host', 'scheduler'],
      reservedHosts: ['compute2'],
      note: null,
    },
    {
      method: 'rh_priority',
      hosts: [hosts[0]!, hosts[2]!],
      order: ['reserved-host', 'scheduler'],
      reservedHosts: [],
      note: /scheduler alone places the servers/,
    },
  ];
  for (const row of table)
    it(`${row.method}, ${row.hosts.length} host(s): ${row.order.join(' then ')}, reserved ${row.reservedHosts.join(', ') || 'none'}`, () => {
      const plan = recoveryPlan({ method: row.method, failedHost: 'compute1', hosts: row.hosts });
      assert.deepEqual(plan.order, row.order);
      assert.deepEqual(plan.reservedHosts, row.reservedHosts, 'reserved, not on maintenance, newest first');
      if (row.note === null) assert.deepEqual(plan.notes, []);
      else assert.match(plan.notes.join('; '), row.note);
    });

  it('the failed host is never its own reserved host', () => {
    const plan = recoveryPlan({ method: 'reserved_host', failedHost: 'compute4', hosts });
    assert.deepEqual(plan.reservedHosts, ['compute5', 'compute2']);
  });
});

describe('usedReservedHost: which Masakari host becomes reserved=false once the incident ended', () => {
  const hosts = [
    { uuid: 'u-2', name: 'compute2.example.org', reserved: true },
    { uuid: 'u-3', name: 'compute3', reserved: false },
  ];
  const table: Array<{
    name: string;
    outcome: { reservedHost: string | null; inService: boolean } | null;
    uuid: string | null;
  }> = [
    { name: 'no outcome (no directive)', outcome: null, uuid: null },
    { name: 'no reserved host used', outcome: { reservedHost: null, inService: false }, uuid: null },
    {
      name: 'put into service (by short hostname)',
      outcome: { reservedHost: 'compute2', inService: true },
      uuid: 'u-2',
    },
    {
      name: 'held but never needed (auto_priority), or given back as a spare',
      outcome: { reservedHost: 'compute2', inService: false },
      uuid: null,
    },
    { name: 'already reserved=false', outcome: { reservedHost: 'compute3', inService: true }, uuid: null },
    { name: 'not a host of the segment', outcome: { reservedHost: 'compute9', inService: true }, uuid: null },
  ];
  for (const row of table)
    it(row.name, () => assert.equal(usedReservedHost(row.outcome, hosts)?.uuid ?? null, row.uuid));
});
