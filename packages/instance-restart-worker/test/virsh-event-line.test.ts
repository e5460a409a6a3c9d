import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseVirshEventLine } from '../src/monitor/virsh-event-line.ts';

// Each line as libvirt 9's virsh prints it (the format strings of tools/virsh-domain-event.c: the
// lifecycle words of its VIR_ENUM tables, `event '%s' for domain '%s': ...`, and the `--timestamp`
// prefix of virTimeStringNowRaw), and what Masakari's instance monitor sends for it.
const table: Array<[line: string, expected: [event: string, detail: string] | null]> = [
  ["event 'lifecycle' for domain 'instance-0000002a': Stopped Failed", ['LIFECYCLE', 'STOPPED_FAILED']],
  ["event 'lifecycle' for domain 'instance-0000002a': Stopped Destroyed", ['LIFECYCLE', 'STOPPED_DESTROYED']],
  ["event 'lifecycle' for domain 'instance-0000002a': Stopped Shutdown", ['LIFECYCLE', 'STOPPED_SHUTDOWN']],
  ["event 'lifecycle' for domain 'instance-0000002a': Shutdown Finished", ['LIFECYCLE', 'SHUTDOWN_FINISHED']],
  [
    "event 'lifecycle' for domain 'instance-0000002a': Suspended I/O Error",
    ['LIFECYCLE', 'SUSPENDED_IOERROR'],
  ],
  [
    "event 'lifecycle' for domain 'instance-0000002a': Suspended Watchdog",
    ['LIFECYCLE', 'SUSPENDED_WATCHDOG'],
  ],
  [
    "event 'lifecycle' for domain 'instance-0000002a': Suspended API error",
    ['LIFECYCLE', 'SUSPENDED_API_ERROR'],
  ],
  ["event 'lifecycle' for domain 'instance-0000002a': Stopped Crashed", null],
  ["event 'lifecycle' for domain 'instance-0000002a': Stopped Migrated", null],
  ["event 'lifecycle' for domain 'instance-0000002a': Shutdown Finished after guest request", null],
  // Names every JavaScript object inherits are not lifecycle details.
  ["event 'lifecycle' for domain 'instance-0000002a': toString", null],
  ["event 'lifecycle' for domain 'instance-0000002a': constructor", null],
  ["event 'lifecycle' for domain 'instance-0000002a': Started Booted", null],
  ["event 'lifecycle' for domain 'instance-0000002a': Suspended Paused", null],
  ["event 'lifecycle' for domain 'instance-0000002a': Crashed Panicked", null],
  ["event 'reboot' for domain 'instance-0000002a'", ['REBOOT', 'UNKNOWN']],
  ["event 'watchdog' for domain 'instance-0000002a': reset", ['WATCHDOG', 'WATCHDOG_RESET']],
  ["event 'watchdog' for domain 'instance-0000002a': poweroff", ['WATCHDOG', 'WATCHDOG_POWEROFF']],
  ["event 'watchdog' for domain 'instance-0000002a': inject-nmi", null],
  [
    "event 'io-error' for domain 'instance-0000002a': /var/lib/nova/instances/x/disk (virtio-disk0) report",
    ['IO_ERROR', 'IO_ERROR_REPORT'],
  ],
  [
    "event 'io-error' for domain 'instance-0000002a': /var/lib/nova/instances/x/disk (virtio-disk0) pause",
    ['IO_ERROR', 'IO_ERROR_PAUSE'],
  ],
  [
    "event 'io-error' for domain 'instance-0000002a': /var/lib/nova/instances/x/disk (virtio-disk0) report due to enospc",
    ['IO_ERROR_REASON', 'UNKNOWN'],
  ],
  ["event 'control-error' for domain 'instance-0000002a'", ['CONTROL_ERROR', 'UNKNOWN']],
  ["event 'rtc-change' for domain 'instance-0000002a': 3600", null],
  ["event 'device-removed' for domain 'instance-0000002a': virtio-disk1", null],
  ['\tx509dname=C=GB,O=Example', null],
  ['error: Disconnected from qemu:///system due to end of file', null],
  ['event loop interrupted', null],
  ['', null],
];

describe('parseVirshEventLine', () => {
  for (const [line, expected] of table) {
    it(JSON.stringify(line), () => {
      const parsed = parseVirshEventLine(line);
      if (expected === null) assert.equal(parsed, null);
      else {
        assert.deepEqual(
          { domain: parsed?.domain, event: parsed?.event, virDomainEvent: parsed?.virDomainEvent },
          { domain: 'instance-0000002a', event: expected[0], virDomainEvent: expected[1] },
        );
      }
    });
  }

  it("reads virsh's --timestamp prefix as the time of the event (UTC)", () => {
    const parsed = parseVirshEventLine(
      "2026-12-07 02:03:09.852+0000: event 'lifecycle' for domain 'instance-0000002a': Stopped Failed\n",
    );
    assert.equal(parsed?.at?.toISOString(), '2026-12-07T02:03:09.852Z');
    assert.equal(parsed?.virDomainEvent, 'STOPPED_FAILED');
    assert.equal(parseVirshEventLine("event 'reboot' for domain 'd'")?.at, null);
  });

  it('keeps a domain name with spaces and quotes whole', () => {
    assert.equal(parseVirshEventLine("event 'reboot' for domain 'my 'odd' vm'")?.domain, "my 'odd' vm");
  });
});
