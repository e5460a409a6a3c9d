import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESTART_HINT_AFTER_SECONDS, type ReenableWaitView } from '@lifeguard/operator-views';
import { renderReenableWaits } from '../src/output/reenable-waits-section.ts';

const REFUSAL =
  'Unable to force up host compute4 as `done` evacuation migration records remain associated with the host.';

function wait(host: string, waitingSeconds: number, overdue = false): ReenableWaitView {
  return {
    host,
    serviceId: `svc-${host}`,
    incidentId: null,
    since: new Date(Date.now() - waitingSeconds * 1000).toISOString(),
    lastRefusedAt: new Date().toISOString(),
    reason: REFUSAL,
    announcedAt: overdue ? new Date().toISOString() : null,
    waitingSeconds,
    overdue,
  };
}

describe('the re-enable waits section: what ends a wait', () => {
  it('says to restart nova-compute once a wait lasts past the hint time, before the alert; nothing for a short wait', () => {
    const short = renderReenableWaits(new Map([['compute3', wait('compute3', 20)]]))!;
    assert.doesNotMatch(short, /restart it/);
    assert.doesNotMatch(short, /⚠/);
    const lingering = renderReenableWaits(
      new Map([['compute4', wait('compute4', RESTART_HINT_AFTER_SECONDS + 30)]]),
    )!;
    assert.match(
      lingering,
      /^compute4: Nova lifts forced_down once nova-compute starts on the host and marks its evacuations completed; if it already runs there \(the host came back before its servers were evacuated\), restart it$/m,
    );
    assert.doesNotMatch(lingering, /⚠/);
    const overdue = renderReenableWaits(new Map([['compute2', wait('compute2', 420, true)]]))!;
    assert.match(overdue, /^⚠ compute2: start nova-compute on the host/m);
    assert.doesNotMatch(overdue, /restart it$/m, 'the overdue host gets the ⚠ line only');
  });
});
