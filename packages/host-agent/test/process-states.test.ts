import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ProcessEntry, processStates, readProcesses } from '../src/index.ts';

const entry = (comm: string, ...argv: string[]): ProcessEntry => ({ comm, argv });

describe('which watched processes run', () => {
  const cases: Array<[string, ProcessEntry[], Record<string, 'running' | 'stopped'>]> = [
    [
      'by command name',
      [entry('libvirtd', '/usr/sbin/libvirtd', '--timeout', '120'), entry('bash', 'bash')],
      { 'nova-compute': 'stopped', libvirtd: 'running' },
    ],
    [
      'a Python program run through its interpreter (the script after python3 and its options)',
      [
        entry(
          'python3',
          '/usr/bin/python3',
          '-u',
          '/usr/bin/nova-compute',
          '--config-file',
          '/etc/nova/nova.conf',
        ),
      ],
      { 'nova-compute': 'running', libvirtd: 'stopped' },
    ],
    [
      'another program whose name begins with a watched one (its command name cut at 15 characters)',
      [entry('nova-compute-wr', '/opt/bin/nova-compute-wrapper')],
      { 'nova-compute': 'stopped', libvirtd: 'stopped' },
    ],
    ['nothing running', [], { 'nova-compute': 'stopped', libvirtd: 'stopped' }],
    [
      'a kernel thread (no arguments) and a name that only contains a watched one',
      [entry('kworker/0:1'), entry('nova-compute-x', 'nova-compute-x')],
      { 'nova-compute': 'stopped', libvirtd: 'stopped' },
    ],
  ];
  for (const [name, processes, expected] of cases) {
    it(name, () => {
      assert.deepEqual(processStates(['nova-compute', 'libvirtd'], processes), expected);
    });
  }

  it('a watched name longer than 15 characters matches the command name the kernel keeps', () => {
    assert.deepEqual(processStates(['neutron-openvswitch-agent'], [entry('neutron-openvsw')]), {
      'neutron-openvswitch-agent': 'running',
    });
  });

  it('reads this machine: the test process itself is listed with its arguments', () => {
    const self = readProcesses().filter((each) => each.argv.includes(process.argv[1] ?? ''));
    assert.ok(self.length >= 1, 'the test process is among /proc');
    assert.deepEqual(processStates(['node'], readProcesses()), { node: 'running' });
  });
});
