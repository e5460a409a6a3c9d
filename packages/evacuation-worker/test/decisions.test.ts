import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrationsInProgress, parseDisabledReason, thresholdOfServiceListing } from '@lifeguard/instance-ha';
import { ComputeService, Migration, Server } from '@lifeguard/openstack';
import {
  decideInstance,
  describeServer,
  latestEvacuation,
  notLanded,
  reenableStep,
  settleAction,
  supersedingIncident,
} from '../src/index.ts';

const FENCED_AT = new Date('2026-11-30T08:00:00Z');
const migration = (id: number, status: string, created: string, extra: Record<string, unknown> = {}) =>
  Migration.parse({
    id,
    instance_uuid: 'vm',
    source_compute: 'compute-1',
    status,
    migration_type: 'evacuation',
    created_at: created,
    ...extra,
  });
const server = (host: string, task: string | null, status = 'ACTIVE') =>
  Server.parse({ id: 'vm', name: 'vm', status, 'OS-EXT-SRV-ATTR:host': host, 'OS-EXT-STS:task_state': task });

describe('reading before writing: the instance decision', () => {
  it('takes the newest evacuation from the failed host created after the fence (less the clock-skew allowance)', () => {
    const latest = latestEvacuation(
      [
        migration(1, 'completed', '2026-11-29T08:00:00.000000'),
        migration(2, 'error', '2026-11-30T08:01:00.000000'),
        migration(3, 'accepted', '2026-11-30T08:02:00.000000'),
        migration(4, 'done', '2026-11-30T08:03:00.000000', { source_compute: 'compute-9' }),
        migration(5, 'done', '2026-11-30T08:04:00.000000', { migration_type: 'live-migration' }),
      ],
      { failedHost: 'compute-1', notBefore: FENCED_AT },
    );
    assert.equal(latest?.id, 3);
    assert.equal(
      latestEvacuation([migration(1, 'done', '2026-11-29T08:00:00')], {
        failedHost: 'compute-1',
        notBefore: FENCED_AT,
      }),
      null,
    );
  });

  it('never evacuates an instance already idle on another host', () => {
    assert.equal(decideInstance(server('compute-2', null), null, 'compute-1', false).kind, 'landed');
    assert.equal(
      decideInstance(
        server('compute-2', null),
        migration(1, 'done', '2026-11-30T08:01:00'),
        'compute-1',
        true,
      ).kind,
      'landed',
    );
  });

  it('watches an evacuation under way instead of sending another', () => {
    assert.equal(
      decideInstance(
        server('compute-1', 'rebuilding'),
        migration(1, 'accepted', '2026-11-30T08:01:00'),
        'compute-1',
        false,
      ).kind,
      'in-progress',
    );
    assert.equal(
      decideInstance(
        server('compute-1', 'rebuilding'),
        migration(1, 'pre-migrating', '2026-11-30T08:01:00'),
        'compute-1',
        true,
      ).kind,
      'in-progress',
    );
    assert.equal(
      decideInstance(server('compute-2', 'rebuild_spawning'), null, 'compute-1', false).kind,
      'in-progress',
    );
    // "no record yet" after lifeguard's own accepted evacuate, while the server shows the rebuild
    assert.equal(
      decideInstance(server('compute-1', 'rebuilding'), null, 'compute-1', true).kind,
      'in-progress',
    );
  });

  it('does not evacuate again when the rebuild finished between reading the server and its migration', () => {
    // Seen against cloud-sim: the server read showed `rebuild_spawning` on the failed host, the
    // migration read a moment later showed `done`.
    const decision = decideInstance(
      server('compute-1', 'rebuild_spawning', 'REBUILD'),
      migration(1, 'done', '2026-11-30T08:01:00'),
      'compute-1',
      true,
    );
    assert.equal(decision.kind, 'in-progress');
  });

  it("quotes Nova's fault.message of a server in ERROR, and says when it is NoValidHost", () => {
    const inError = Server.parse({
      id: 'vm',
      name: 'vm',
      status: 'ERROR',
      'OS-EXT-SRV-ATTR:host': 'compute-1',
      'OS-EXT-STS:task_state': null,
      fault: { code: 500, message: 'No valid host was found. There are not enough hosts available.' },
    });
    const failed = decideInstance(inError, migration(1, 'error', '2026-11-30T08:01:00'), 'compute-1', true);
    assert.deepEqual(failed, {
      kind: 'evacuate',
      reason:
        'evacuation migration error: Nova says "No valid host was found. There are not enough hosts available."',
      previous: migration(1, 'error', '2026-11-30T08:01:00'),
      noValidHost: true,
    });
    const otherFault = Server.parse({
      ...inError,
      fault: { code: 500, message: 'Claim failed on compute-2' },
    });
    const rebuilt = decideInstance(
      otherFault,
      migration(1, 'failed', '2026-11-30T08:01:00'),
      'compute-1',
      true,
    );
    assert.deepEqual(rebuilt.kind === 'evacuate' && [rebuilt.reason, rebuilt.noValidHost], [
      'evacuation migration failed: Nova says "Claim failed on compute-2"',
      false,
    ]);
    // Nova shows a fault only while the server is in ERROR: an old one on an ACTIVE server is not quoted
    const active = Server.parse({ ...inError, status: 'ACTIVE' });
    assert.deepEqual(describeServer(active), 'ACTIVE on compute-1');
    assert.equal(
      describeServer(inError),
      'ERROR on compute-1, fault "No valid host was found. There are not enough hosts available."',
    );
    // A timeout's reason quotes the fault once: in the decision's reason, not again in the server.
    const look = { server: otherFault, latest: null, decision: rebuilt };
    assert.equal(
      notLanded(look),
      'evacuation migration failed: Nova says "Claim failed on compute-2" (ERROR on compute-1)',
    );
  });

  it('evacuates again after a failed migration, and evacuates an idle instance on the failed host', () => {
    const failed = decideInstance(
      server('compute-1', null, 'ERROR'),
      migration(1, 'error', '2026-11-30T08:01:00'),
      'compute-1',
      true,
    );
    assert.deepEqual(
      [failed.kind, failed.kind === 'evacuate' && failed.reason],
      ['evacuate', 'evacuation migration error'],
    );
    assert.equal(decideInstance(server('compute-1', null), null, 'compute-1', false).kind, 'evacuate');
    // a stuck task from before the failure, with no evacuation of this incident: evacuate (after a reset)
    assert.equal(
      decideInstance(server('compute-1', 'rebuilding'), null, 'compute-1', false).kind,
      'evacuate',
    );
  });
});

describe('restoring the original state (docs/instance-ha-rules.md#evacuation)', () => {
  const landed = (status: string, task: string | null = null) =>
    Server.parse({
      id: 'vm',
      name: 'vm',
      status,
      'OS-EXT-SRV-ATTR:host': 'compute-2',
      'OS-EXT-STS:task_state': task,
    });
  it('is settled when idle in the original status', () => {
    assert.equal(settleAction(landed('ACTIVE'), 'ACTIVE').kind, 'settled');
    assert.equal(settleAction(landed('SHUTOFF'), 'SHUTOFF').kind, 'settled');
    assert.equal(settleAction(landed('ERROR'), 'ERROR').kind, 'settled');
  });
  it('stops a SHUTOFF instance that came back ACTIVE and resets an ERROR one', () => {
    assert.equal(settleAction(landed('ACTIVE'), 'SHUTOFF').kind, 'stop');
    assert.equal(settleAction(landed('ACTIVE'), 'ERROR').kind, 'reset-error');
    assert.equal(settleAction(landed('ACTIVE', 'powering-off'), 'SHUTOFF').kind, 'wait');
  });
  it('fails an ACTIVE instance whose rebuild ended in ERROR', () => {
    assert.equal(settleAction(landed('ERROR'), 'ACTIVE').kind, 'failed');
  });
});

describe("global THRESHOLD at evacuation time (docs/instance-ha-rules.md#threshold, the node monitor's rule)", () => {
  const now = new Date('2026-11-30T08:00:00Z');
  const config = { deltaSeconds: 30, thresholdSuspectAgeSeconds: 15, thresholdPercent: 50 };
  const reported = (secondsAgo: number) => new Date(now.getTime() - secondsAgo * 1000).toISOString();
  const services = (states: Array<[string, string, boolean, number?]>) =>
    states.map(([host, state, forced, secondsAgo]) =>
      ComputeService.parse({
        id: host,
        binary: 'nova-compute',
        host,
        status: 'enabled',
        state,
        forced_down: forced,
        updated_at: reported(secondsAgo ?? 1),
      }),
    );
  const situation = (list: ReturnType<typeof services>, scope: Set<string> | null = null) =>
    thresholdOfServiceListing(list, config, scope, now);

  it('allows 2 of 4 down (50 %) and blocks 2 of 3 (66.7 %)', () => {
    const four = services([
      ['a', 'down', true],
      ['b', 'down', false],
      ['c', 'up', false],
      ['d', 'up', false],
    ]);
    assert.equal(situation(four).blocked, false);
    const three = services([
      ['a', 'down', true],
      ['b', 'up', true],
      ['c', 'up', false],
    ]);
    const result = situation(three);
    assert.equal(result.blocked, true);
    assert.deepEqual([...result.impactedHosts].sort(), ['a', 'b']);
  });
  it('limits both sides to evacuable-aggregate hosts when given', () => {
    const list = services([
      ['a', 'down', true],
      ['b', 'up', false],
      ['c', 'down', false],
      ['d', 'down', false],
    ]);
    assert.equal(situation(list, new Set(['a', 'b'])).percent, 50);
  });
  it('counts hosts Nova still reports up but older than DELTA, and silent ones older than THRESHOLD_SUSPECT_AGE', () => {
    const list = services([
      ['fenced', 'down', true],
      ['stale', 'up', false, 40],
      ['silent', 'up', false, 20],
      ['healthy', 'up', false, 2],
    ]);
    const result = situation(list);
    assert.deepEqual([...result.impactedHosts].sort(), ['fenced', 'silent', 'stale']);
    assert.equal(result.blocked, true);
  });
});

describe('re-enable rules (docs/instance-ha-rules.md#re-enable)', () => {
  const base = {
    leaveDisabled: false,
    forceEnable: false,
    forcedDownByLifeguard: true,
    migrationsInProgress: 0,
    lastKdumpPacketAt: null,
    kdumpQuietSeconds: 60,
    reportAgeSeconds: 5,
    deltaSeconds: 30,
    now: new Date('2026-11-30T09:00:00Z'),
  };
  const complete =
    'lifeguard evacuation complete: 2026-11-30T08:30:00.000Z incident=compute-1.20261130T080000Z.abcd';
  const input = (status: string, state: string, forced: boolean, reason: string | null) => ({
    ...base,
    service: { status, state, forced_down: forced },
    marker: parseDisabledReason(reason),
  });

  it('unsets forced_down first, then enables once the service reports up', () => {
    assert.equal(reenableStep(input('disabled', 'down', true, complete)).kind, 'unset-forced-down');
    assert.equal(reenableStep(input('disabled', 'down', false, complete)).kind, 'wait');
    assert.equal(reenableStep(input('disabled', 'up', false, complete)).kind, 'enable');
    assert.equal(reenableStep(input('enabled', 'up', false, null)).kind, 'reenabled');
  });
  it('enables only a service whose own last report is no older than DELTA, whatever state Nova shows', () => {
    const up = input('disabled', 'up', false, complete);
    assert.equal(reenableStep({ ...up, reportAgeSeconds: 30 }).kind, 'enable');
    assert.equal(reenableStep({ ...up, reportAgeSeconds: null }).kind, 'enable');
    const silent = reenableStep({ ...up, reportAgeSeconds: 31.4 });
    assert.deepEqual(silent, {
      kind: 'wait',
      reason: 'its compute service last reported 31 s ago (more than DELTA, 30 s): it is not reporting',
      until: null,
    });
  });
  it('names the open incident that supersedes a re-enable job’s', () => {
    assert.deepEqual(supersedingIncident('compute-1.a', { id: 'compute-1.b' }), { id: 'compute-1.b' });
    assert.equal(supersedingIncident('compute-1.a', { id: 'compute-1.a' }), null);
    assert.equal(supersedingIncident('compute-1.a', null), null);
    assert.equal(supersedingIncident(null, { id: 'compute-1.b' }), null);
  });
  it('LEAVE_DISABLED leaves a completed host alone', () => {
    assert.equal(
      reenableStep({ ...input('disabled', 'down', true, complete), leaveDisabled: true }).kind,
      'left-disabled',
    );
  });
  it('waits while evacuations from the host are in progress, unless FORCE_ENABLE', () => {
    assert.equal(
      reenableStep({ ...input('disabled', 'down', true, complete), migrationsInProgress: 2 }).kind,
      'wait',
    );
    assert.equal(
      reenableStep({ ...input('disabled', 'down', true, complete), migrationsInProgress: null }).kind,
      'wait',
    );
    assert.equal(
      reenableStep({
        ...input('disabled', 'down', true, complete),
        migrationsInProgress: 2,
        forceEnable: true,
      }).kind,
      'unset-forced-down',
    );
    assert.equal(
      migrationsInProgress([
        { status: 'accepted' },
        { status: 'done' },
        { status: 'pre-migrating' },
        { status: 'error' },
      ]),
      2,
    );
  });
  it('waits 60 s after the last kdump packet', () => {
    const kdump = 'lifeguard evacuation complete (kdump): 2026-11-30T08:30:00.000Z';
    const step = reenableStep({
      ...input('disabled', 'down', true, kdump),
      lastKdumpPacketAt: new Date('2026-11-30T08:59:30Z'),
    });
    assert.equal(step.kind, 'wait');
    assert.equal(step.kind === 'wait' && step.until?.toISOString(), '2026-11-30T09:00:30.000Z');
    assert.equal(
      reenableStep({
        ...input('disabled', 'down', true, kdump),
        lastKdumpPacketAt: new Date('2026-11-30T08:58:00Z'),
      }).kind,
      'unset-forced-down',
    );
  });
  it('never touches FAILED hosts, running evacuations, or an operator’s own forced_down', () => {
    assert.equal(
      reenableStep(input('disabled', 'down', true, 'lifeguard evacuation FAILED: 2026-11-30T08:30:00.000Z'))
        .kind,
      'not-a-candidate',
    );
    assert.equal(
      reenableStep(input('disabled', 'down', true, 'lifeguard evacuation: 2026-11-30T08:30:00.000Z')).kind,
      'not-a-candidate',
    );
    assert.equal(
      reenableStep({ ...input('enabled', 'down', true, null), forcedDownByLifeguard: false }).kind,
      'not-a-candidate',
    );
    assert.equal(reenableStep(input('enabled', 'down', true, null)).kind, 'unset-forced-down');
    assert.equal(reenableStep(input('disabled', 'up', false, 'maintenance')).kind, 'not-a-candidate');
  });
});
