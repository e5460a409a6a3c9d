import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DISABLED_REASON_MAXIMUM_LENGTH, formatDisabledReason, parseDisabledReason } from '../src/index.ts';

const at = new Date('2026-07-28T09:18:12.345Z');
const incidentId = 'compute-3.20260728T091800Z.7f3a';

describe('lifeguard disabled_reason markers', () => {
  it('writes the evacuating, kdump, complete, FAILED and reserved markers with a timestamp and the incident', () => {
    assert.equal(
      formatDisabledReason({ kind: 'evacuating', incidentId, at }),
      `lifeguard evacuation: 2026-07-28T09:18:12.345Z incident=${incidentId}`,
    );
    assert.equal(
      formatDisabledReason({ kind: 'evacuating', kdump: true, incidentId, at }),
      `lifeguard evacuation (kdump): 2026-07-28T09:18:12.345Z incident=${incidentId}`,
    );
    assert.equal(
      formatDisabledReason({ kind: 'complete', incidentId, at }),
      `lifeguard evacuation complete: 2026-07-28T09:18:12.345Z incident=${incidentId}`,
    );
    assert.equal(
      formatDisabledReason({ kind: 'complete', kdump: true, incidentId, at }),
      `lifeguard evacuation complete (kdump): 2026-07-28T09:18:12.345Z incident=${incidentId}`,
    );
    assert.equal(
      formatDisabledReason({ kind: 'failed', incidentId, at }),
      `lifeguard evacuation FAILED: 2026-07-28T09:18:12.345Z incident=${incidentId}`,
    );
    assert.equal(
      formatDisabledReason({ kind: 'reserved', at }),
      'lifeguard-reserved: 2026-07-28T09:18:12.345Z',
    );
  });

  it("keeps markers within Nova's 255 characters by leaving out an overlong incident id", () => {
    const longId = `${'h'.repeat(180)}.20260728T091800Z.7f3a`;
    const reason = formatDisabledReason({ kind: 'complete', kdump: true, incidentId: longId, at });
    assert.ok(reason.length <= DISABLED_REASON_MAXIMUM_LENGTH);
    assert.equal(reason, 'lifeguard evacuation complete (kdump): 2026-07-28T09:18:12.345Z');
    assert.equal(parseDisabledReason(reason).kind, 'complete');
  });

  it('refuses a kdump FAILED or kdump reserved marker (no such form)', () => {
    assert.throws(() => formatDisabledReason({ kind: 'failed', kdump: true }), RangeError);
  });

  it('parses every lifeguard marker back: kind, kdump, timestamp, origin, incident id', () => {
    const cases = [
      [{ kind: 'evacuating' as const }, 'evacuating', false],
      [{ kind: 'evacuating' as const, kdump: true }, 'evacuating', true],
      [{ kind: 'complete' as const }, 'complete', false],
      [{ kind: 'complete' as const, kdump: true }, 'complete', true],
      [{ kind: 'failed' as const }, 'failed', false],
    ] as const;
    for (const [input, kind, kdump] of cases) {
      const parsed = parseDisabledReason(formatDisabledReason({ ...input, incidentId, at }));
      assert.deepEqual(parsed, {
        kind,
        origin: 'lifeguard',
        kdump,
        recovered: false,
        timestamp: '2026-07-28T09:18:12.345Z',
        incidentId,
      });
    }
    assert.deepEqual(parseDisabledReason('lifeguard-reserved: 2026-07-28T09:18:12.345Z'), {
      kind: 'reserved',
      origin: 'lifeguard',
      kdump: false,
      recovered: false,
      timestamp: '2026-07-28T09:18:12.345Z',
      incidentId: null,
    });
  });
});

describe("InstanceHA's disabled_reason markers (docs/instance-ha-rules.md#service-categorisation), for a switch-over mid-incident", () => {
  const ts = '2026-07-28T09:18:12.345678+00:00';
  const cases: Array<[string, string, boolean, boolean]> = [
    [`instanceha evacuation: ${ts}`, 'evacuating', false, false],
    [`instanceha evacuation (kdump): ${ts}`, 'evacuating', true, false],
    [`instanceha evacuation (recovered): ${ts}`, 'evacuating', false, true],
    [`instanceha evacuation complete: ${ts}`, 'complete', false, false],
    [`instanceha evacuation complete (kdump): ${ts}`, 'complete', true, false],
    [`instanceha evacuation FAILED: ${ts}`, 'failed', false, false],
    [`instanceha-reserved: ${ts}`, 'reserved', false, false],
  ];
  for (const [reason, kind, kdump, recovered] of cases) {
    it(`recognises "${reason.split(':')[0]}" as ${kind}${kdump ? ' (kdump)' : ''}${recovered ? ' (recovered)' : ''}`, () => {
      const parsed = parseDisabledReason(reason);
      assert.equal(parsed.kind, kind);
      assert.equal(parsed.origin, 'instanceha');
      assert.equal(parsed.kdump, kdump);
      assert.equal(parsed.recovered, recovered);
      assert.equal(parsed.timestamp, ts);
      assert.equal(parsed.incidentId, null);
    });
  }

  it("recognises the classic agent's failure marker without the instanceha prefix (docs/instance-ha-rules.md#the-classic-agent)", () => {
    const parsed = parseDisabledReason('evacuation FAILED: 2025-11-02 10:00:00');
    assert.equal(parsed.kind, 'failed');
    assert.equal(parsed.origin, 'instanceha');
  });

  it('treats any other reason containing "reserved" as an operator-marked spare (case-sensitive)', () => {
    assert.deepEqual(
      [parseDisabledReason('reserved spare for rack 4').kind, parseDisabledReason('reserved spare').origin],
      ['reserved', 'operator'],
    );
    assert.equal(parseDisabledReason('RESERVED').kind, 'none');
  });

  it("reports an operator's own reason as kind none, origin operator; no reason as origin null", () => {
    assert.deepEqual(parseDisabledReason('maintenance: new DIMMs'), {
      kind: 'none',
      origin: 'operator',
      kdump: false,
      recovered: false,
      timestamp: null,
      incidentId: null,
    });
    assert.equal(parseDisabledReason(null).origin, null);
    assert.equal(parseDisabledReason('').origin, null);
    assert.equal(parseDisabledReason(undefined).kind, 'none');
  });
});
