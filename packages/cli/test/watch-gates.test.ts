// What an event about a host means for `--watch`: a table over gateVerdict.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEvent } from '@lifeguard/contracts';
import { gateVerdict } from '../src/commands/watch-gates.ts';

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
