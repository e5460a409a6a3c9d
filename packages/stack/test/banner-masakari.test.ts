// The banner's Masakari API line: where `openstack segment|notification ...` reaches the stack.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { masakariApiEndpoint } from '../src/banner.ts';

const worker = (kind: string, env: NodeJS.ProcessEnv = {}) => ({ options: { definition: { kind }, env } });

describe('masakariApiEndpoint (the banner line of the Masakari API)', () => {
  const rows: ReadonlyArray<[string, ReturnType<typeof worker>[], string, string | null]> = [
    [
      "Masakari's port on loopback",
      [worker('node-monitor'), worker('masakari-api', { LIFEGUARD_MASAKARI_API_PORT: '15868' })],
      '127.0.0.1',
      'http://127.0.0.1:15868/v1',
    ],
    [
      'an address listening everywhere is shown as loopback',
      [worker('masakari-api', { LIFEGUARD_MASAKARI_API_PORT: '15868' })],
      '0.0.0.0',
      'http://127.0.0.1:15868/v1',
    ],
    [
      'an IPv6 address in brackets',
      [worker('masakari-api', { LIFEGUARD_MASAKARI_API_PORT: '15868' })],
      'fd00::5',
      'http://[fd00::5]:15868/v1',
    ],
    [
      'a port the system chooses (0) is not known: no line',
      [worker('masakari-api', { LIFEGUARD_MASAKARI_API_PORT: '0' })],
      '127.0.0.1',
      null,
    ],
    [
      'no Masakari API worker: no line',
      [worker('node-monitor'), worker('fencing-worker')],
      '127.0.0.1',
      null,
    ],
  ];
  for (const [name, workers, httpHost, expected] of rows)
    it(name, () => assert.equal(masakariApiEndpoint(workers, httpHost), expected));
});
