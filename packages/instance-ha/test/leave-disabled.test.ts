import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leftDisabled } from '../src/index.ts';

describe('LEAVE_DISABLED (docs/instance-ha-rules.md#leave_disabled)', () => {
  it('holds a host disabled with the complete marker, only when LEAVE_DISABLED is true', () => {
    const complete = { kind: 'complete' } as const;
    assert.equal(leftDisabled({ leaveDisabled: true, status: 'disabled', marker: complete }), true);
    assert.equal(leftDisabled({ leaveDisabled: false, status: 'disabled', marker: complete }), false);
  });

  it('does not hold an enabled host, nor one disabled by anything but a completed evacuation', () => {
    assert.equal(
      leftDisabled({ leaveDisabled: true, status: 'enabled', marker: { kind: 'complete' } }),
      false,
    );
    for (const kind of ['evacuating', 'failed', 'none'] as const) {
      assert.equal(leftDisabled({ leaveDisabled: true, status: 'disabled', marker: { kind } }), false, kind);
    }
  });
});
