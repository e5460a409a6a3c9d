import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  categoriseServices,
  type IncidentState,
  type OpenIncidentSummary,
  parseNovaTimestamp,
  shortHostname,
} from '../src/index.ts';

const now = new Date('2026-07-28T10:00:00Z');
const fresh = '2026-07-28T09:59:55.000000';
const old = '2026-07-28T09:58:00.000000';
let serial = 0;

function service(host: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  serial++;
  return {
    id: `0000${serial}-uuid`,
    binary: 'nova-compute',
    host,
    zone: 'nova',
    status: 'enabled',
    state: 'up',
    updated_at: fresh,
    disabled_reason: null,
    forced_down: false,
    ...fields,
  };
}

function categorise(records: unknown[], incidents: Record<string, IncidentState> = {}) {
  const openIncidents = new Map<string, OpenIncidentSummary>(
    Object.entries(incidents).map(([host, state]) => [host, { id: `${host}.20260728T095000Z.0001`, state }]),
  );
  return categoriseServices(records, { now, deltaSeconds: 30, openIncidents });
}
const hosts = (list: ReadonlyArray<{ host: string }>) => list.map((each) => each.host);
const failureHosts = (result: ReturnType<typeof categorise>) =>
  result.freshFailures.map((each) => each.service.host);
const fencedMarker = (marker: string) => ({
  status: 'disabled',
  state: 'down',
  forced_down: true,
  disabled_reason: marker,
});

describe('service categorisation (docs/instance-ha-rules.md#service-categorisation)', () => {
  it('counts an enabled host Nova reports down as a fresh failure', () => {
    const result = categorise([service('compute-0', { state: 'down', updated_at: old })]);
    assert.deepEqual(
      result.freshFailures.map((each) => [each.service.host, each.reason]),
      [['compute-0', 'state-down']],
    );
  });

  it('counts an enabled host Nova still reports up but whose updated_at is older than DELTA as stale', () => {
    const result = categorise([service('compute-0', { updated_at: old }), service('compute-1')]);
    assert.deepEqual(
      result.freshFailures.map((each) => [each.service.host, each.reason]),
      [['compute-0', 'stale']],
    );
    assert.equal(result.freshFailures[0]!.service.ageSeconds, 120);
  });

  it('is strict at the DELTA boundary: updated_at exactly now − DELTA is not stale', () => {
    const exactly = categorise([service('compute-0', { updated_at: '2026-07-28T09:59:30' })]);
    assert.deepEqual(failureHosts(exactly), []);
    const justOlder = categorise([service('compute-0', { updated_at: '2026-07-28T09:59:29.999' })]);
    assert.deepEqual(failureHosts(justOlder), ['compute-0']);
  });

  it('never fences a disabled host (maintenance), down or stale', () => {
    const result = categorise([
      service('compute-0', {
        status: 'disabled',
        state: 'down',
        updated_at: old,
        disabled_reason: 'new DIMMs',
      }),
    ]);
    assert.deepEqual(failureHosts(result), []);
    assert.deepEqual(hosts(result.resumeCandidates), []);
    assert.deepEqual(hosts(result.reenableCandidates), []);
  });

  it('never lets a forced-down host re-enter the fresh failures', () => {
    const result = categorise([service('compute-0', { state: 'down', forced_down: true, updated_at: old })]);
    assert.deepEqual(failureHosts(result), []);
  });

  it('does not treat a missing, null or unparsable updated_at as stale (but state down still counts)', () => {
    const result = categorise([
      service('a', { updated_at: null }),
      service('b', { updated_at: 'yesterday' }),
      service('c', { updated_at: undefined }),
      service('d', { updated_at: null, state: 'down' }),
    ]);
    assert.deepEqual(failureHosts(result), ['d']);
    assert.deepEqual(hosts(result.unparsableUpdatedAt), ['a', 'b', 'c', 'd']);
  });

  it('skips and reports 2.69 partial records (status UNKNOWN, no state/forced_down/id) and never treats them as down', () => {
    const partial = { binary: 'nova-compute', host: 'cell2-compute-0', status: 'UNKNOWN' };
    const noHost = { id: 'x', binary: 'nova-compute', status: 'enabled', state: 'down', forced_down: false };
    const result = categorise([partial, noHost, 'junk', service('compute-0', { state: 'down' })]);
    assert.deepEqual(failureHosts(result), ['compute-0']);
    assert.equal(result.skipped.length, 3);
    assert.deepEqual(result.skipped[0], {
      host: 'cell2-compute-0',
      reason: 'no id, status "UNKNOWN", state missing, forced_down missing',
    });
    assert.equal(result.skipped[1]!.host, null);
    assert.equal(result.services.length, 1);
  });

  it('skips a record of another binary', () => {
    const result = categorise([service('ctl-0', { binary: 'nova-scheduler', state: 'down' })]);
    assert.deepEqual(failureHosts(result), []);
    assert.match(result.skipped[0]!.reason, /binary nova-scheduler/);
  });
});

describe('resume candidates (docs/instance-ha-rules.md#service-categorisation, with lifeguard safety differences)', () => {
  const ts = '2026-07-28T09:18:12+00:00';

  it("resumes a forced-down, down, disabled host with InstanceHA's in-progress marker (kdump and recovered too)", () => {
    const result = categorise([
      service('a', fencedMarker(`instanceha evacuation: ${ts}`)),
      service('b', fencedMarker(`instanceha evacuation (kdump): ${ts}`)),
      service('c', fencedMarker(`instanceha evacuation (recovered): ${ts}`)),
    ]);
    assert.deepEqual(hosts(result.resumeCandidates), ['a', 'b', 'c']);
  });

  it("does not resume InstanceHA's complete or FAILED markers, nor an empty or missing reason", () => {
    const result = categorise([
      service('a', fencedMarker(`instanceha evacuation complete: ${ts}`)),
      service('b', fencedMarker(`instanceha evacuation FAILED: ${ts}`)),
      service('c', fencedMarker('')),
      service('d', { status: 'disabled', state: 'down', forced_down: true }),
    ]);
    assert.deepEqual(hosts(result.resumeCandidates), []);
    assert.deepEqual(hosts(result.reenableCandidates), ['a']);
    assert.deepEqual(hosts(result.failedEvacuations), ['b']);
  });

  it('needs forced_down and state down: a forced-down host that reports up is not resumed', () => {
    const result = categorise([
      service('a', { ...fencedMarker(`instanceha evacuation: ${ts}`), state: 'up' }),
      service('b', { ...fencedMarker(`instanceha evacuation: ${ts}`), forced_down: false }),
    ]);
    assert.deepEqual(hosts(result.resumeCandidates), []);
  });

  it("resumes lifeguard's in-progress marker only while lifeguard has an open incident for the host", () => {
    const marker = `lifeguard evacuation: 2026-07-28T09:50:00.000Z incident=a.20260728T095000Z.0001`;
    const withIncident = categorise([service('a.example.com', fencedMarker(marker))], { a: 'evacuating' });
    assert.deepEqual(hosts(withIncident.resumeCandidates), ['a.example.com']);
    const without = categorise([service('a', fencedMarker(marker))]);
    assert.deepEqual(hosts(without.resumeCandidates), []);
    assert.deepEqual(hosts(without.orphanedLifeguardMarkers), ['a']);
    const failed = categorise([service('a', fencedMarker(marker))], { a: 'failed' });
    assert.deepEqual(hosts(failed.resumeCandidates), []);
  });

  it("never resumes an operator's manual force-down + disable (not proof of fencing, unlike InstanceHA's reconciliation)", () => {
    const result = categorise([service('a', fencedMarker('maintenance'))]);
    assert.deepEqual(hosts(result.resumeCandidates), []);
    assert.deepEqual(hosts(result.reenableCandidates), []);
  });
});

describe('re-enable candidates (docs/instance-ha-rules.md#service-categorisation, #re-enable, #where-lifeguard-differs)', () => {
  it('re-enables a disabled host with a complete marker (lifeguard or InstanceHA, kdump or not)', () => {
    const result = categorise([
      service('a', {
        status: 'disabled',
        state: 'down',
        forced_down: true,
        disabled_reason: 'instanceha evacuation complete: t',
      }),
      service('b', {
        status: 'disabled',
        state: 'up',
        forced_down: false,
        disabled_reason:
          'lifeguard evacuation complete (kdump): 2026-07-28T09:00:00.000Z incident=b.20260728T090000Z.0001',
      }),
    ]);
    assert.deepEqual(hosts(result.reenableCandidates), ['a', 'b']);
  });

  it("leaves an operator's manual forced_down on an enabled host alone (InstanceHA would undo it)", () => {
    const result = categorise([service('a', { forced_down: true, state: 'down' })]);
    assert.deepEqual(hosts(result.reenableCandidates), []);
    assert.deepEqual(hosts(result.operatorForcedDown), ['a']);
  });

  it('re-enables an enabled, forced-down host only when lifeguard set it: its open incident is evacuated', () => {
    const evacuated = categorise([service('a', { forced_down: true, state: 'down' })], { a: 'evacuated' });
    assert.deepEqual(hosts(evacuated.reenableCandidates), ['a']);
    const inProgress = categorise([service('a', { forced_down: true, state: 'down' })], { a: 'fenced' });
    assert.deepEqual(hosts(inProgress.reenableCandidates), []);
    assert.deepEqual(hosts(inProgress.operatorForcedDown), []);
  });

  it('puts a FAILED host in no set: it waits for a person', () => {
    const result = categorise([
      service(
        'a',
        fencedMarker(
          'lifeguard evacuation FAILED: 2026-07-28T09:00:00.000Z incident=a.20260728T090000Z.0001',
        ),
      ),
    ]);
    assert.deepEqual(failureHosts(result), []);
    assert.deepEqual(hosts(result.resumeCandidates), []);
    assert.deepEqual(hosts(result.reenableCandidates), []);
    assert.deepEqual(hosts(result.failedEvacuations), ['a']);
  });

  it('sorts a mixed list into the right sets in one pass', () => {
    const result = categorise(
      [
        service('up-0'),
        service('down-0', { state: 'down' }),
        service('stale-0', { updated_at: old }),
        service('maint-0', { status: 'disabled', state: 'down', disabled_reason: 'maintenance' }),
        service('resume-0', fencedMarker('instanceha evacuation: t')),
        service('done-0', fencedMarker('instanceha evacuation complete: t')),
        service('manual-0', { forced_down: true }),
      ],
      {},
    );
    assert.deepEqual(failureHosts(result), ['down-0', 'stale-0']);
    assert.deepEqual(hosts(result.resumeCandidates), ['resume-0']);
    assert.deepEqual(hosts(result.reenableCandidates), ['done-0']);
    assert.deepEqual(hosts(result.operatorForcedDown), ['manual-0']);
  });
});

describe('host names and Nova timestamps', () => {
  it('shortens host names at the first dot (docs/instance-ha-rules.md#short-host-names: FQDN, short, several dots, no dot)', () => {
    assert.equal(shortHostname('compute-0.example.com'), 'compute-0');
    assert.equal(shortHostname('compute-0'), 'compute-0');
    assert.equal(shortHostname('a.b.c.d'), 'a');
    assert.equal(shortHostname(''), '');
  });

  it('parses naive Nova timestamps as UTC, with or without fraction, Z or an offset', () => {
    assert.equal(parseNovaTimestamp('2026-07-28T09:18:12.123456')?.toISOString(), '2026-07-28T09:18:12.123Z');
    assert.equal(parseNovaTimestamp('2026-07-28T09:18:12Z')?.toISOString(), '2026-07-28T09:18:12.000Z');
    assert.equal(parseNovaTimestamp('2026-07-28T11:18:12+02:00')?.toISOString(), '2026-07-28T09:18:12.000Z');
    assert.equal(parseNovaTimestamp('2026-07-28 09:18:12')?.toISOString(), '2026-07-28T09:18:12.000Z');
    assert.equal(parseNovaTimestamp('2026-02-30T00:00:00'), null);
    assert.equal(parseNovaTimestamp('garbage'), null);
    assert.equal(parseNovaTimestamp(null), null);
  });
});
