// What an event about a host means for `--watch`: tables over gateVerdict and repeatKey, and the
// recovery story's end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEvent } from '@lifeguard/contracts';
import { gateVerdict } from '../src/commands/watch-gates.ts';
import { recoveryStep, repeatKey } from '../src/commands/watch-host.ts';

const source = { service: 'fencing-worker', instance: 'fencing-worker-1' };

describe('gateVerdict', () => {
  it('no room to evacuate holds the host back for now (a warning shown once), never the end of the story', () => {
    const event = createEvent(
      'host.capacity.insufficient',
      {
        host: 'compute3',
        incidentId: '5d1c2b0e-6a8f-4a57-9d7b-2f4b1a0c9e11',
        serverCount: 2,
        reason:
          'no compute host can take the 2 server(s) of compute3: of 2 other compute host(s), 2 disabled',
        unavailable: [
          { host: 'compute1', why: 'disabled' },
          { host: 'compute2', why: 'disabled' },
        ],
      },
      source,
    );
    const verdict = gateVerdict(event, 'compute3');
    assert.equal(verdict?.kind, 'held');
    assert.equal(verdict?.kind === 'held' ? verdict.key : null, 'capacity');
    assert.match(
      verdict!.why,
      /^no room to evacuate \(no compute host can take the 2 server\(s\) of compute3: .*\): it is not powered off/,
    );
  });
});

describe('repeatKey', () => {
  const incidentId = '5d1c2b0e-6a8f-4a57-9d7b-2f4b1a0c9e11';
  const requested = (fencingToken: number, forcedDown: boolean) =>
    createEvent(
      'host.recovery.requested',
      {
        host: 'compute3',
        serviceId: 'a1',
        incidentId,
        fencingToken,
        status: 'disabled',
        state: 'up',
        forcedDown,
        disabledReason: `instanceha evacuation complete: ${incidentId}`,
      },
      source,
    );

  it('a host.recovery.requested published again at the next poll, reporting the same, has the same key: shown once', () => {
    const first = requested(7, true);
    const next = requested(8, true);
    assert.notEqual(first.id, next.id, 'two events');
    assert.equal(repeatKey(first), repeatKey(next));
  });

  it('one that reports a change (forced_down lifted) has another key: shown', () => {
    assert.notEqual(repeatKey(requested(7, true)), repeatKey(requested(7, false)));
  });

  it('every other event is always shown (no key)', () => {
    const reenabled = createEvent(
      'host.reenabled',
      { host: 'compute3', incidentId, serviceId: 'a1' },
      source,
    );
    assert.equal(repeatKey(reenabled), null);
  });
});

describe('recoveryStep', () => {
  it('a host that came back before it was fenced ends the story, as a success', () => {
    const recovered = createEvent(
      'host.recovered',
      {
        host: 'compute3',
        incidentId: '5d1c2b0e-6a8f-4a57-9d7b-2f4b1a0c9e11',
        gate: 'host-down',
        reason: 'compute3 reports to Nova: state up, updated_at 2 s ago (DELTA 30 s)',
        action: 'fence',
      },
      source,
    );
    assert.deepEqual(recoveryStep('compute3')(recovered), { kind: 'end' });
  });

  it('an evacuated host not re-enabled when the time runs out: the watch names every cause, not LEAVE_DISABLED alone', () => {
    const evacuated = createEvent(
      'host.evacuated',
      {
        host: 'compute3',
        incidentId: '5d1c2b0e-6a8f-4a57-9d7b-2f4b1a0c9e11',
        mode: 'traditional',
        evacuatedInstances: ['9e6ee47a-d560-4eb8-aedc-84e2b4c1aa9f'],
        durationSeconds: 4.2,
        poweredOn: true,
      },
      { service: 'evacuation-worker', instance: 'evacuation-worker-1' },
    );
    const step = recoveryStep('compute3')(evacuated);
    assert.equal(step.kind, 'epilogue');
    const unfinished = step.kind === 'epilogue' ? step.unfinished : '';
    assert.equal(
      unfinished,
      'compute3 is evacuated but not re-enabled yet: lifeguard hosts says why (its nova-compute not reporting again yet, Nova refusing forced_down=false until nova-compute restarts, or LEAVE_DISABLED)',
    );
  });
});
