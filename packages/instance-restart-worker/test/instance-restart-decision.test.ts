import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type InstanceRestartFacts,
  type InstanceRestartSettings,
  instanceRestartDecision,
} from '../src/policy/instance-restart-decision.ts';

const now = new Date('2026-12-07T03:00:00.000Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

const facts: InstanceRestartFacts = {
  failure: { source: 'masakari-notification', event: 'LIFECYCLE', virDomainEvent: 'STOPPED_FAILED' },
  reportedHost: 'compute-1',
  observedAt: minutesAgo(1),
  now,
  server: {
    status: 'ERROR',
    vmState: 'error',
    taskState: null,
    host: 'compute-1.example.org',
    metadata: { HA_Enabled: 'True' },
  },
  computeService: { state: 'up', forcedDown: false },
  openIncidentId: null,
  ownProgress: null,
  otherRestartsBeganAt: [],
};
const settings: InstanceRestartSettings = {
  processAllInstances: false,
  haEnabledMetadataKey: 'HA_Enabled',
  ignoreInstancesInErrorState: false,
  maxRestartsPerHour: 3,
};

type Row = [
  name: string,
  change: (base: InstanceRestartFacts) => InstanceRestartFacts,
  expected: string,
  settingsChange?: Partial<InstanceRestartSettings>,
];
const server =
  (change: Partial<NonNullable<InstanceRestartFacts['server']>>) => (base: InstanceRestartFacts) => ({
    ...base,
    server: { ...base.server!, ...change },
  });
const failure = (event: string, virDomainEvent: string | null) => (base: InstanceRestartFacts) => ({
  ...base,
  failure: { ...base.failure, event, virDomainEvent },
});

// expected: `action` or `action:detail` (restart: reset/stop flags; ignore: Masakari's status).
const table: Row[] = [
  ['LIFECYCLE/STOPPED_FAILED in ERROR: reset, stop, start', (f) => f, 'restart:reset,stop'],
  [
    'QEMU_GUEST_AGENT_ERROR/STOPPED_FAILED',
    failure('QEMU_GUEST_AGENT_ERROR', 'STOPPED_FAILED'),
    'restart:reset,stop',
  ],
  ['IO_ERROR/IO_ERROR_REPORT', failure('IO_ERROR', 'IO_ERROR_REPORT'), 'restart:reset,stop'],
  [
    'LIFECYCLE/STOPPED_DESTROYED (a user destroyed it)',
    failure('LIFECYCLE', 'STOPPED_DESTROYED'),
    'ignore:ignored',
  ],
  ['LIFECYCLE/STOPPED_SHUTDOWN', failure('LIFECYCLE', 'STOPPED_SHUTDOWN'), 'ignore:ignored'],
  [
    'IO_ERROR/STOPPED_FAILED (pair not in the table)',
    failure('IO_ERROR', 'STOPPED_FAILED'),
    'ignore:ignored',
  ],
  ['REBOOT/UNKNOWN', failure('REBOOT', 'UNKNOWN'), 'ignore:ignored'],
  ['WATCHDOG without a domain event', failure('WATCHDOG', null), 'ignore:ignored'],
  ['server deleted', (f) => ({ ...f, server: null }), 'ignore:ignored'],
  ['no HA_Enabled metadata: finished, as Masakari', server({ metadata: {} }), 'ignore:finished'],
  ['HA_Enabled=False', server({ metadata: { HA_Enabled: 'False' } }), 'ignore:finished'],
  ['HA_Enabled=yes (oslo true word)', server({ metadata: { HA_Enabled: 'yes' } }), 'restart:reset,stop'],
  [
    'no metadata but process_all_instances',
    server({ metadata: {} }),
    'restart:reset,stop',
    { processAllInstances: true },
  ],
  [
    'another metadata key',
    server({ metadata: { HA: 't' } }),
    'restart:reset,stop',
    { haEnabledMetadataKey: 'HA' },
  ],
  [
    'host forced_down',
    (f) => ({ ...f, computeService: { state: 'down', forcedDown: true } }),
    'ignore:ignored',
  ],
  [
    'host down in Nova',
    (f) => ({ ...f, computeService: { state: 'down', forcedDown: false } }),
    'ignore:ignored',
  ],
  [
    'host under an open incident',
    (f) => ({ ...f, openIncidentId: 'compute-1.20261207T025900Z.ab12' }),
    'ignore:ignored',
  ],
  ['paused', server({ status: 'PAUSED', vmState: 'paused' }), 'ignore:ignored'],
  ['rescued', server({ status: 'RESCUE', vmState: 'rescued' }), 'ignore:ignored'],
  [
    'shelved offloaded',
    server({ status: 'SHELVED_OFFLOADED', vmState: 'shelved_offloaded' }),
    'ignore:ignored',
  ],
  [
    'error with ignore_instances_in_error_state',
    (f) => f,
    'ignore:ignored',
    { ignoreInstancesInErrorState: true },
  ],
  ['moved to another host since', server({ host: 'compute-2' }), 'ignore:ignored'],
  [
    'already SHUTOFF (Nova synced the crash): start only',
    server({ status: 'SHUTOFF', vmState: 'stopped' }),
    'restart:start',
  ],
  ['still ACTIVE in Nova: stop, start', server({ status: 'ACTIVE', vmState: 'active' }), 'restart:stop'],
  [
    'resized: reset to active first',
    server({ status: 'VERIFY_RESIZE', vmState: 'resized' }),
    'restart:reset,stop',
  ],
  ['Nova task under way', server({ status: 'ACTIVE', vmState: 'active', taskState: 'powering-off' }), 'wait'],
  [
    'restarted by another job after this failure: once per failure',
    (f) => ({ ...f, otherRestartsBeganAt: [minutesAgo(0.5)] }),
    'ignore:ignored',
  ],
  [
    'restarted before this failure: counted, not the same failure',
    (f) => ({ ...f, otherRestartsBeganAt: [minutesAgo(30)] }),
    'restart:reset,stop',
  ],
  [
    'three restarts within the hour: give up',
    (f) => ({ ...f, otherRestartsBeganAt: [minutesAgo(50), minutesAgo(20), minutesAgo(5)] }),
    'give-up:3',
  ],
  [
    'older restarts leave the hour',
    (f) => ({ ...f, otherRestartsBeganAt: [minutesAgo(90), minutesAgo(61), minutesAgo(5)] }),
    'restart:reset,stop',
  ],
  [
    'own restart already begun: not counted against itself',
    (f) => ({
      ...f,
      ownProgress: 'began',
      otherRestartsBeganAt: [minutesAgo(50), minutesAgo(20), minutesAgo(5)],
    }),
    'restart:reset,stop',
  ],
  [
    'own start sent and ACTIVE: confirmed, no second restart',
    (f) => ({
      ...f,
      ownProgress: 'start-sent',
      server: { ...f.server!, status: 'ACTIVE', vmState: 'active' },
    }),
    'confirm',
  ],
  [
    'own start sent, still SHUTOFF: start again',
    (f) => ({
      ...f,
      ownProgress: 'start-sent',
      server: { ...f.server!, status: 'SHUTOFF', vmState: 'stopped' },
    }),
    'restart:start',
  ],
  [
    'own start sent and powering on: wait',
    (f) => ({
      ...f,
      ownProgress: 'start-sent',
      server: { ...f.server!, status: 'SHUTOFF', vmState: 'stopped', taskState: 'powering-on' },
    }),
    'wait',
  ],
  [
    'own start sent but the host went down meanwhile',
    (f) => ({ ...f, ownProgress: 'start-sent', computeService: { state: 'down', forcedDown: false } }),
    'ignore:ignored',
  ],
];

function summary(decision: ReturnType<typeof instanceRestartDecision>): string {
  switch (decision.action) {
    case 'restart': {
      const steps = [decision.resetToActive ? 'reset' : '', decision.stop ? 'stop' : ''].filter(Boolean);
      return `restart:${steps.join(',') || 'start'}`;
    }
    case 'ignore':
      return `ignore:${decision.masakariStatus}`;
    case 'give-up':
      return `give-up:${decision.restartsWithinHour}`;
    default:
      return decision.action;
  }
}

describe('instanceRestartDecision', () => {
  for (const [name, change, expected, settingsChange] of table) {
    it(name, () => {
      const decision = instanceRestartDecision(change(facts), { ...settings, ...settingsChange });
      assert.equal(summary(decision), expected, decision.reason);
      assert.ok(decision.reason.length > 0);
    });
  }

  it('names the failure, the host and the limit in its reasons', () => {
    const ignored = instanceRestartDecision(failure('LIFECYCLE', 'STOPPED_DESTROYED')(facts), settings);
    assert.match(ignored.reason, /LIFECYCLE\/STOPPED_DESTROYED is not an instance failure Masakari acts on/);
    const down = instanceRestartDecision(
      { ...facts, computeService: { state: 'up', forcedDown: true } },
      settings,
    );
    assert.match(down.reason, /host compute-1\.example\.org is forced_down: the host flow recovers it/);
    const given = instanceRestartDecision(
      { ...facts, otherRestartsBeganAt: [minutesAgo(3), minutesAgo(2), minutesAgo(1.5)] },
      settings,
    );
    assert.match(given.reason, /restarted 3 time\(s\) within the last hour \(at most 3\)/);
  });
});
