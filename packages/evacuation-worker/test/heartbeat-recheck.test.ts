import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { describe, it } from 'node:test';
import { encodeHeartbeat, HeartbeatListener, HeartbeatStore } from '@lifeguard/node-monitor';
import { createLogger } from '@lifeguard/runtime';
import { waitFor } from '@lifeguard/testing';
import { bedsClosedAfterTests, type EvacuationBed } from './support/evacuation-bed.ts';

// With CHECK_HEARTBEAT, the evacuation's safety re-check (before the first evacuate and before every
// evacuate request) reads the heartbeats the node monitors record: a host whose heartbeats still
// arrive is running, whatever Nova says of its nova-compute (docs/evacuation-worker.md, "Safety checks").

const bed = bedsClosedAfterTests();
const key = Buffer.from('5a'.repeat(32), 'hex');
const heartbeatConfig = { SMART_EVACUATION: 'true', CHECK_HEARTBEAT: 'true', HEARTBEAT_TIMEOUT: '30' };

/**
 * The node monitor's heartbeat listener on the bed's Redis prefix, and compute1 sending it an HBV2
 * heartbeat every 300 ms (its nova-compute is dead, the machine runs). Stopped with the bed.
 */
async function heartbeatsFromCompute1(test: EvacuationBed): Promise<{ received: () => number }> {
  const listener = new HeartbeatListener({
    port: 0,
    host: '127.0.0.1',
    keys: [key],
    store: new HeartbeatStore(test.redis, test.prefix),
    logger: createLogger({ service: 'node-monitor', level: 'silent' }),
  });
  await listener.start();
  let received = 0;
  listener.on('heartbeat', () => received++);
  const socket = createSocket('udp4');
  const send = () => socket.send(encodeHeartbeat('compute1.example.com', key), listener.port, '127.0.0.1');
  send();
  const timer = setInterval(send, 300);
  test.onClose(async () => {
    clearInterval(timer);
    socket.close();
    await listener.stop();
  });
  await waitFor('a heartbeat recorded', () => received > 0, 5000, 50);
  return { received: () => received };
}

describe('the evacuation re-check reads heartbeats (CHECK_HEARTBEAT)', () => {
  it('does not evacuate a fenced, forced-down host whose heartbeats arrive', async () => {
    const test = await bed({ instanceHa: heartbeatConfig });
    const server = test.sim.addServer({ host: 'compute1' });
    await heartbeatsFromCompute1(test);
    const { jobId } = await test.failHost('compute1');
    const { failedReason } = await test.hostJobOutcome(jobId);
    assert.match(
      failedReason ?? '',
      /refused: the host is not down: compute1 sent a heartbeat \d+ s ago \(HEARTBEAT_TIMEOUT 30 s\) \(fenced power-off-confirmed at /,
    );
    assert.equal(test.sim.evacuateCalls(server.id), 0, 'never evacuated');
    assert.equal(test.servers([server.id])[0]!.host, 'compute1');
    const [failed] = test.events.of('host.evacuation.failed');
    assert.match(failed!.data.reason, /^refused: .*sent a heartbeat/);
  });

  it("an instance job's evacuate request is refused while the host's heartbeats arrive (the re-check before every request)", async () => {
    const test = await bed({ instanceHa: heartbeatConfig });
    const server = test.sim.addServer({ host: 'compute1', name: 'db' });
    const { incident } = await test.failHost('compute1', { addJob: false });
    await heartbeatsFromCompute1(test);
    const { queue, jobId } = await test.addInstanceJob('compute1', server, incident.id);
    try {
      await waitFor('the instance job to fail', async () => (await queue.getJobState(jobId)) === 'failed');
      assert.match(
        (await queue.getJob(jobId))?.failedReason ?? '',
        /compute1 may no longer be evacuated: .*sent a heartbeat \d+ s ago/,
      );
      assert.equal(test.sim.evacuateCalls(server.id), 0, 'never evacuated');
    } finally {
      await queue.close();
    }
  });

  it('evacuates a fenced host that sends no heartbeat (the channel configured)', async () => {
    const test = await bed({ instanceHa: heartbeatConfig });
    const server = test.sim.addServer({ host: 'compute1' });
    const { jobId } = await test.failHost('compute1');
    const { result } = await test.hostJobOutcome(jobId);
    assert.equal(result?.outcome, 'evacuated');
    assert.notEqual(test.servers([server.id])[0]!.host, 'compute1');
  });
});
