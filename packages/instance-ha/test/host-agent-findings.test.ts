import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HostAgentEvidence, hostAgentFindings } from '../src/index.ts';

const now = new Date('2026-12-04T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

/** Evidence from `networks` (network → host → seconds ago) and `processes` (host → [seconds ago, states]). */
function evidence(
  networks: Record<string, Record<string, number>>,
  processes: Record<string, [number, Record<string, 'running' | 'stopped'>]> = {},
): HostAgentEvidence {
  return {
    networks: new Map(
      Object.entries(networks).map(([network, hosts]) => [
        network,
        new Map(Object.entries(hosts).map(([host, seconds]) => [host, ago(seconds)])),
      ]),
    ),
    processes: new Map(
      Object.entries(processes).map(([host, [seconds, states]]) => [
        host,
        { at: ago(seconds), processes: states },
      ]),
    ),
  };
}

describe('what the node monitor makes of the host agents (HEARTBEAT_DOWN_AFTER 3 s)', () => {
  const cases: Array<[string, HostAgentEvidence, ReturnType<typeof hostAgentFindings>]> = [
    [
      'heard on both networks, everything running: nothing to say beyond that',
      evidence(
        { management: { c1: 1 }, storage: { c1: 0 } },
        { c1: [0, { 'nova-compute': 'running', libvirtd: 'running' }] },
      ),
      [{ host: 'c1', heardOn: ['management', 'storage'], silentOn: [], stoppedProcesses: [] }],
    ],
    [
      'silent on storage for more than 3 s while heard on management: storage named',
      evidence({ management: { c1: 1 }, storage: { c1: 3.5 } }),
      [{ host: 'c1', heardOn: ['management'], silentOn: ['storage'], stoppedProcesses: [] }],
    ],
    [
      'exactly 3 s on storage is not yet silent',
      evidence({ management: { c1: 1 }, storage: { c1: 3 } }),
      [{ host: 'c1', heardOn: ['management', 'storage'], silentOn: [], stoppedProcesses: [] }],
    ],
    [
      'silent on every network: not judged here (a failure goes through the gates)',
      evidence({ management: { c1: 4 }, storage: { c1: 9 } }),
      [],
    ],
    [
      'a fresh report saying nova-compute stopped, from a host heard: the process named',
      evidence({ management: { c1: 0 } }, { c1: [1, { 'nova-compute': 'stopped', libvirtd: 'running' }] }),
      [{ host: 'c1', heardOn: ['management'], silentOn: [], stoppedProcesses: ['nova-compute'] }],
    ],
    [
      'an old report saying stopped counts for nothing',
      evidence({ management: { c1: 0 } }, { c1: [10, { 'nova-compute': 'stopped' }] }),
      [{ host: 'c1', heardOn: ['management'], silentOn: [], stoppedProcesses: [] }],
    ],
    [
      'a network the host never sent on is not silent for it; hosts sorted',
      evidence({ management: { c2: 0, c1: 0 }, storage: { c2: 0 } }),
      [
        { host: 'c1', heardOn: ['management'], silentOn: [], stoppedProcesses: [] },
        { host: 'c2', heardOn: ['management', 'storage'], silentOn: [], stoppedProcesses: [] },
      ],
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      assert.deepEqual(hostAgentFindings(input, now, 3), expected);
    });
  }
});
