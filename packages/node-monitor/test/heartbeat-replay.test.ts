import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { encodeHeartbeat, HeartbeatListener, HeartbeatReplayGuard, HeartbeatStore } from '../src/index.ts';

const key = Buffer.from('44'.repeat(32), 'hex');
const logger = createLogger({ service: 'node-monitor-test', level: 'silent' });

describe('heartbeat replay guard (docs/instance-ha-rules.md#heartbeats)', () => {
  const at = new Date('2026-07-28T10:00:00Z');
  const later = new Date('2026-07-28T10:00:30Z');

  it('accepts a newer heartbeat and refuses the same datagram a second time', () => {
    const guard = new HeartbeatReplayGuard();
    const first = encodeHeartbeat('compute-0', key, at);
    assert.equal(guard.admit('compute-0', at, first, later), true);
    assert.equal(guard.admit('compute-0', at, Buffer.from(first), later), false);
    assert.equal(guard.admit('compute-0', later, encodeHeartbeat('compute-0', key, later), later), true);
  });

  it('refuses a heartbeat older than the newest accepted one from that host, inside the time window', () => {
    const guard = new HeartbeatReplayGuard();
    assert.equal(guard.admit('compute-0', later, encodeHeartbeat('compute-0', key, later), later), true);
    assert.equal(guard.admit('compute-0', at, encodeHeartbeat('compute-0', key, at), later), false);
    assert.equal(
      guard.admit('compute-1', at, encodeHeartbeat('compute-1', key, at), later),
      true,
      'other hosts are independent',
    );
  });

  it('accepts two different heartbeats of the same second (a sender restarted within that second)', () => {
    const guard = new HeartbeatReplayGuard();
    assert.equal(guard.admit('compute-0', at, encodeHeartbeat('compute-0', key, at), later), true);
    assert.equal(
      guard.admit('compute-0', at, encodeHeartbeat('compute-0.example.org', key, at), later),
      true,
    );
  });
});

describe('heartbeat listener refuses a replayed datagram (real UDP, real Redis)', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('hb-replay');
  const store = new HeartbeatStore(redis, prefix);
  const listener = new HeartbeatListener({ port: 0, host: '127.0.0.1', keys: [key], store, logger });
  const client = createSocket('udp4');

  before(() => listener.start());
  after(async () => {
    client.close();
    await listener.stop();
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  async function send(datagram: Buffer): Promise<string> {
    const outcome = new Promise<string>((resolve) => {
      const onHeartbeat = () => done('accepted');
      const onRejected = ({ reason }: { reason: string }) => done(reason);
      const done = (value: string) => {
        listener.off('heartbeat', onHeartbeat);
        listener.off('rejected', onRejected);
        resolve(value);
      };
      listener.on('heartbeat', onHeartbeat);
      listener.on('rejected', onRejected);
    });
    await new Promise<void>((resolve, reject) =>
      client.send(datagram, listener.port, '127.0.0.1', (error) => (error ? reject(error) : resolve())),
    );
    return outcome;
  }

  it('records the first copy, refuses the second as replayed, and an older captured one too', async () => {
    const now = Date.now();
    const older = encodeHeartbeat('compute-7', key, new Date(now - 60_000));
    const current = encodeHeartbeat('compute-7', key, new Date(now));
    assert.equal(await send(current), 'accepted');
    const recorded = (await store.all()).get('compute-7');
    assert.ok(recorded);
    assert.equal(await send(current), 'replayed');
    assert.equal(await send(older), 'replayed');
    assert.equal(listener.rejected.replayed, 2);
    assert.deepEqual((await store.all()).get('compute-7'), recorded, 'a replay does not refresh the host');
  });
});
