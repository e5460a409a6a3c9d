// A Masakari segment's recovery_method and reserved hosts as the evacuation follows them, as pure
// functions: which reserved hosts can take servers now (segmentPlacement) and which host each
// evacuate request names (evacuateTarget and its companions). docs/migrating-from-masakari.md#recovery-methods
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TargetHostUse } from '@lifeguard/contracts';
import { formatDisabledReason, type PlacementMethod } from '@lifeguard/instance-ha';
import { ComputeService, Server } from '@lifeguard/openstack';
import {
  evacuateTarget,
  evacuationPolicy,
  type InstanceSnapshot,
  NO_PROGRESS,
  nextInstanceAction,
  reservedHostUnusable,
  retriesAfterNoValidHost,
  schedulerAfterRefusal,
  segmentPlacement,
} from '../src/index.ts';

const service = (host: string, fields: Record<string, unknown> = {}) =>
  ComputeService.parse({
    id: `id-${host}`,
    binary: 'nova-compute',
    host,
    zone: 'nova',
    status: 'disabled',
    state: 'up',
    forced_down: false,
    disabled_reason: 'spare of segment-a',
    ...fields,
  });

describe('reservedHostUnusable: can a reserved host of the segment take servers now', () => {
  const table: Array<{ name: string; host: string; service: ComputeService | null; why: RegExp | null }> = [
    { name: 'disabled by the operator, up', host: 'spare-1', service: service('spare-1'), why: null },
    {
      name: 'disabled with no reason',
      host: 'spare-1',
      service: service('spare-1', { disabled_reason: null }),
      why: null,
    },
    {
      name: "in lifeguard's pool (lifeguard-reserved)",
      host: 'spare-1',
      service: service('spare-1', { disabled_reason: formatDisabledReason({ kind: 'reserved' }) }),
      why: null,
    },
    {
      name: 'enabled already',
      host: 'spare-1',
      service: service('spare-1', { status: 'enabled', disabled_reason: null }),
      why: null,
    },
    { name: 'not in Nova', host: 'spare-1', service: null, why: /Nova lists no nova-compute service/ },
    {
      name: 'down',
      host: 'spare-1',
      service: service('spare-1', { state: 'down' }),
      why: /compute service is down/,
    },
    {
      name: 'forced down',
      host: 'spare-1',
      service: service('spare-1', { forced_down: true, state: 'down' }),
      why: /forced down/,
    },
    {
      name: 'taken out by lifeguard after its own failure (FAILED marker)',
      host: 'spare-1',
      service: service('spare-1', {
        disabled_reason: formatDisabledReason({
          kind: 'failed',
          incidentId: 'spare-1.20261207T050000Z.a1b2',
        }),
      }),
      why: /taken out of service after a failure/,
    },
    {
      name: 'nova-compute stopped (process-stopped marker)',
      host: 'spare-1',
      service: service('spare-1', { disabled_reason: formatDisabledReason({ kind: 'process-stopped' }) }),
      why: /taken out of service/,
    },
    {
      name: 'the failed host itself (by short hostname)',
      host: 'compute-1.example.org',
      service: service('compute-1'),
      why: /the failed host/,
    },
  ];
  for (const row of table)
    it(row.name, () => {
      const why = reservedHostUnusable(row.host, row.service, 'compute-1');
      if (row.why === null) assert.equal(why, null);
      else assert.match(why ?? '', row.why);
    });
});

describe('segmentPlacement: the segment reserved hosts, in order, and what each method does', () => {
  const services = [
    service('compute-1', { status: 'enabled', state: 'down', disabled_reason: null }),
    service('compute-2', { status: 'enabled', disabled_reason: null }),
    service('spare-1', { state: 'down' }),
    service('spare-2.example.org'),
    service('spare-3'),
    service('spare-4', { forced_down: true }),
  ];
  const table: Array<{
    method: PlacementMethod;
    reservedHosts: string[];
    candidates: string[];
    unusable: string[];
    use: TargetHostUse | null;
    enable: 'plan' | 'first-use';
    without: 'scheduler' | 'refuse';
  }> = [
    {
      method: 'auto',
      reservedHosts: ['spare-3'],
      candidates: [],
      unusable: [],
      use: null,
      enable: 'plan',
      without: 'scheduler',
    },
    {
      method: 'reserved_host',
      reservedHosts: ['spare-1', 'spare-3', 'spare-2', 'spare-4', 'spare-9'],
      candidates: ['spare-3', 'spare-2.example.org'],
      unusable: ['spare-1', 'spare-4', 'spare-9'],
      use: 'every-attempt',
      enable: 'plan',
      without: 'refuse',
    },
    {
      method: 'reserved_host',
      reservedHosts: ['spare-1', 'spare-4'],
      candidates: [],
      unusable: ['spare-1', 'spare-4'],
      use: 'every-attempt',
      enable: 'plan',
      without: 'refuse',
    },
    {
      method: 'rh_priority',
      reservedHosts: ['spare-2', 'spare-3'],
      candidates: ['spare-2.example.org', 'spare-3'],
      unusable: [],
      use: 'then-scheduler',
      enable: 'plan',
      without: 'scheduler',
    },
    {
      method: 'auto_priority',
      reservedHosts: ['spare-3'],
      candidates: ['spare-3'],
      unusable: [],
      use: 'after-scheduler',
      enable: 'first-use',
      without: 'scheduler',
    },
    {
      method: 'rh_priority',
      reservedHosts: [],
      candidates: [],
      unusable: [],
      use: 'then-scheduler',
      enable: 'plan',
      without: 'scheduler',
    },
  ];
  for (const row of table)
    it(`${row.method} over ${row.reservedHosts.join(', ') || 'no reserved host'}`, () => {
      const placement = segmentPlacement({
        directive: { method: row.method, reservedHosts: row.reservedHosts },
        failedHost: 'compute-1',
        services,
      });
      assert.deepEqual(
        placement.candidates.map((each) => each.host),
        row.candidates,
        'usable ones, in the directive order',
      );
      assert.deepEqual(
        placement.unusable.map((each) => each.host),
        row.unusable,
      );
      assert.equal(placement.use, row.use);
      assert.equal(placement.enable, row.enable);
      assert.equal(placement.withoutReservedHost, row.without);
    });
});

describe('evacuateTarget: the host each evacuate request names', () => {
  const table: Array<{ use: TargetHostUse; targets: Array<string | null> }> = [
    { use: 'first-attempt', targets: ['spare', null, null] },
    { use: 'then-scheduler', targets: ['spare', null, null] },
    { use: 'every-attempt', targets: ['spare', 'spare', 'spare'] },
    { use: 'after-scheduler', targets: [null, 'spare', 'spare'] },
  ];
  for (const row of table)
    it(`${row.use}: attempts 0, 1, 2 → ${row.targets.map((each) => each ?? 'scheduler').join(', ')}`, () => {
      assert.deepEqual(
        [0, 1, 2].map((attempt) => evacuateTarget(row.use, 'spare', attempt)),
        row.targets,
      );
      assert.deepEqual(
        [0, 1, 2].map((attempt) => evacuateTarget(row.use, null, attempt)),
        [null, null, null],
        'no reserved host: always the scheduler',
      );
    });

  const refusals: Array<{ use: TargetHostUse; withoutHost: boolean }> = [
    { use: 'first-attempt', withoutHost: true },
    { use: 'then-scheduler', withoutHost: true },
    { use: 'every-attempt', withoutHost: false },
    { use: 'after-scheduler', withoutHost: false },
  ];
  for (const row of refusals)
    it(`${row.use}: a 409/500 with the host is ${row.withoutHost ? '' : 'not '}sent again without it`, () =>
      assert.equal(schedulerAfterRefusal(row.use), row.withoutHost));

  const noValidHost: Array<{ use: TargetHostUse; attempts: number; retried: boolean }> = [
    { use: 'first-attempt', attempts: 1, retried: false },
    { use: 'then-scheduler', attempts: 1, retried: true },
    { use: 'then-scheduler', attempts: 2, retried: false },
    { use: 'every-attempt', attempts: 1, retried: false },
    { use: 'after-scheduler', attempts: 1, retried: true },
    { use: 'after-scheduler', attempts: 2, retried: false },
  ];
  for (const row of noValidHost)
    it(`${row.use}: NoValidHost after ${row.attempts} request(s) is ${row.retried ? 'tried elsewhere' : 'final'}`, () =>
      assert.equal(retriesAfterNoValidHost(row.use, 'spare', row.attempts), row.retried));
});

describe("nextInstanceAction with a segment's reserved host (smart mode)", () => {
  const policy = evacuationPolicy({
    smartEvacuation: true,
    orchestratedRestart: false,
    evacuationRetries: 3,
    evacuationTimeoutSeconds: 300,
  });
  const now = Date.parse('2026-12-07T05:00:00Z');
  const idle = Server.parse({ id: 'vm', name: 'vm', status: 'ERROR', 'OS-EXT-SRV-ATTR:host': 'compute-1' });
  const noRoom = {
    kind: 'evacuate',
    reason: 'evacuation migration error: Nova says "No valid host was found."',
    previous: null,
    noValidHost: true,
  } as const;
  const snapshot = (use: TargetHostUse, attempts: number): InstanceSnapshot => ({
    target: { failedHost: 'compute-1', targetHost: 'spare', targetHostUse: use },
    progress: {
      ...NO_PROGRESS,
      attempts,
      awaitingResult: attempts > 0,
      startedAt: new Date(now - 30_000).toISOString(),
    },
    now,
    observation: { kind: 'seen', look: { server: idle, latest: null, decision: noRoom }, at: now },
    stopped: false,
    recheck: { kind: 'go' },
    // This run holds the instance's evacuate claim: what follows is the target's rule alone.
    claim: { kind: 'mine', generation: 1 },
  });
  const table: Array<{ name: string; use: TargetHostUse; attempts: number; next: string }> = [
    {
      name: 'auto_priority: the scheduler found no host → the reserved host',
      use: 'after-scheduler',
      attempts: 1,
      next: 'send-evacuate spare',
    },
    {
      name: 'auto_priority: the reserved host had no room either → failed',
      use: 'after-scheduler',
      attempts: 2,
      next: 'fail',
    },
    {
      name: 'rh_priority: the reserved host had no room → the scheduler',
      use: 'then-scheduler',
      attempts: 1,
      next: 'send-evacuate scheduler',
    },
    {
      name: 'reserved_host: the reserved host had no room → failed, never the scheduler',
      use: 'every-attempt',
      attempts: 1,
      next: 'fail',
    },
  ];
  for (const row of table)
    it(row.name, () => {
      const action = nextInstanceAction(policy, snapshot(row.use, row.attempts));
      const next =
        action.kind === 'send-evacuate' ? `send-evacuate ${action.targetHost ?? 'scheduler'}` : action.kind;
      assert.equal(next, row.next);
    });

  it('reserved_host: a retry after a failed attempt names the reserved host again', () => {
    const failed = { ...noRoom, noValidHost: false, reason: 'evacuation migration error' } as const;
    const base = snapshot('every-attempt', 1);
    const action = nextInstanceAction(policy, {
      ...base,
      observation: { kind: 'seen', look: { server: idle, latest: null, decision: failed }, at: now },
    });
    assert.equal(action.kind, 'send-evacuate');
    assert.equal(action.kind === 'send-evacuate' ? action.targetHost : null, 'spare');
  });
});
