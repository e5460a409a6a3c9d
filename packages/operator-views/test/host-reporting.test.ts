import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ComputeService } from '@lifeguard/openstack';
import { judgeHostReporting } from '../src/hosts/host-reporting.ts';

const now = new Date('2026-12-01T10:00:00Z');
const secondsAgo = (seconds: number) => new Date(now.getTime() - seconds * 1000);
const service = (fields: Partial<ComputeService>): ComputeService =>
  ({
    id: 'id-compute3',
    binary: 'nova-compute',
    host: 'compute3',
    zone: 'nova',
    status: 'enabled',
    state: 'up',
    forced_down: false,
    disabled_reason: null,
    updated_at: secondsAgo(2).toISOString(),
    ...fields,
  }) as ComputeService;

describe('judgeHostReporting: the evidence confirm-fenced refuses on', () => {
  it('Nova up with a fresh report is reporting, with the evidence in words', () => {
    const judged = judgeHostReporting(service({}), null, 30, now);
    assert.equal(judged.reporting, true);
    assert.deepEqual(judged.evidence, [
      'Nova: state up, updated_at 2 s ago (DELTA 30 s): nova-compute is reporting',
    ]);
  });

  it('forced down with a fresh updated_at is reporting: forced_down is never read as down', () => {
    assert.equal(
      judgeHostReporting(service({ state: 'down', forced_down: true }), null, 30, now).reporting,
      true,
    );
  });

  it('down and silent is not reporting, unless its heartbeat was seen within DELTA', () => {
    const silent = service({ state: 'down', updated_at: secondsAgo(120).toISOString() });
    assert.equal(judgeHostReporting(silent, null, 30, now).reporting, false);
    assert.equal(judgeHostReporting(silent, secondsAgo(300), 30, now).reporting, false);
    const beating = judgeHostReporting(silent, secondsAgo(4), 30, now);
    assert.equal(beating.reporting, true);
    assert.equal(beating.evidence[1], 'heartbeat: last seen 4 s ago: the host is running');
  });

  it('a host Nova does not list is not reporting, and says so', () => {
    assert.deepEqual(judgeHostReporting(null, null, 30, now), {
      reporting: false,
      evidence: ['Nova: no nova-compute service'],
    });
  });
});
