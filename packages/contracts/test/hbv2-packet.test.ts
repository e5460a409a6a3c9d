import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  encodeHeartbeat,
  formatHostAgentReport,
  HEARTBEAT_MAGIC,
  type HostAgentReport,
  parseHostAgentReport,
} from '../src/index.ts';

describe("the host agent's report in an HBV2 heartbeat", () => {
  const report: HostAgentReport = {
    network: 'storage',
    processes: { 'nova-compute': 'running', libvirtd: 'stopped' },
  };

  it('is written as network=...;<process>=<state>;... and read back the same', () => {
    const text = formatHostAgentReport(report);
    assert.equal(text, 'network=storage;nova-compute=running;libvirtd=stopped');
    assert.deepEqual(parseHostAgentReport(text), report);
    assert.deepEqual(parseHostAgentReport('network=management'), { network: 'management', processes: {} });
  });

  const notReports: Array<[string, string]> = [
    ['', 'empty'],
    ['nova-compute=running', 'no network first'],
    ['network=storage;nova-compute=maybe', 'a state that is not running or stopped'],
    ['network=storage;nova-compute=running;nova-compute=stopped', 'a process twice'],
    ['network=storage;network=management', 'the network twice'],
    ['network=Storage', 'an upper-case name'],
    ['network=storage;;libvirtd=running', 'an empty pair'],
    ['network=storage;libvirtd', 'a pair without "="'],
    ['network=a=b', 'two "=" in a pair'],
    ['ute', 'the rest of a name with a NUL in it'],
  ];
  for (const [text, why] of notReports) {
    it(`is not read from "${text}" (${why})`, () => {
      assert.equal(parseHostAgentReport(text), null);
    });
  }

  it('refuses to write a name the reader would refuse', () => {
    assert.throws(
      () => formatHostAgentReport({ network: 'Bad Net', processes: {} }),
      /bad network name "Bad Net"/,
    );
    assert.throws(
      () => formatHostAgentReport({ network: 'storage', processes: { network: 'running' } }),
      /bad process name "network"/,
    );
    assert.throws(
      () => formatHostAgentReport({ network: 'storage', processes: { 'nova compute': 'running' } }),
      /bad process name "nova compute"/,
    );
  });

  it('is signed with the rest of the packet: HBV2 framing, the name, a NUL, the report, the HMAC of all of it', () => {
    const key = Buffer.alloc(32, 7);
    const sentAt = new Date('2026-12-04T10:00:00Z');
    const packet = encodeHeartbeat('compute-1', key, sentAt, report);
    assert.equal(packet.readUInt32BE(0), HEARTBEAT_MAGIC);
    assert.equal(Number(packet.readBigUInt64BE(4)), sentAt.getTime() / 1000);
    const body = packet.subarray(0, packet.length - 32);
    assert.equal(body.subarray(12).toString('utf8'), `compute-1\0${formatHostAgentReport(report)}`);
    assert.deepEqual(packet.subarray(packet.length - 32), createHmac('sha256', key).update(body).digest());
    // Without a report: InstanceHA's own packet, the name alone.
    assert.equal(encodeHeartbeat('compute-1', key, sentAt).subarray(12, -32).toString('utf8'), 'compute-1');
  });
});
