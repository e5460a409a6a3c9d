import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import {
  canonicalAddress,
  encodeKdumpPacket,
  KdumpListener,
  KdumpStore,
  parseKdumpPacket,
} from '../src/index.ts';

const run = promisify(execFile);
const FENCE_KDUMP_SEND = '/usr/libexec/fence-agents/fence_kdump_send';
const logger = createLogger({ service: 'instance-ha-test', level: 'silent' });

/** Sends one fence_kdump message with the real fence_kdump_send (`-c 1 -i 1`) to `address`:`port`. */
async function sendWithFenceKdumpSend(port: number, family: 'ipv4' | 'ipv6', address: string): Promise<void> {
  await run(FENCE_KDUMP_SEND, ['-p', String(port), '-c', '1', '-i', '1', '-f', family, address]);
}

function send(address: string, port: number, payload: Buffer): Promise<void> {
  const socket = createSocket(address.includes(':') ? 'udp6' : 'udp4');
  return new Promise((resolve, reject) =>
    socket.send(payload, port, address, (error) => {
      socket.close();
      if (error) reject(error);
      else resolve();
    }),
  );
}

describe('fence_kdump message (docs/instance-ha-rules.md#fence_kdump-packets)', () => {
  it('accepts the bytes fence_kdump_send sends on x86 (captured: 40 2a 30 1b 01 00 00 00)', () => {
    assert.deepEqual(parseKdumpPacket(Buffer.from('402a301b01000000', 'hex')), {
      valid: true,
      byteOrder: 'little-endian',
      version: 1,
    });
  });

  it('accepts the magic in big-endian order too (big-endian senders)', () => {
    assert.deepEqual(parseKdumpPacket(Buffer.from('1b302a4000000001', 'hex')), {
      valid: true,
      byteOrder: 'big-endian',
      version: 1,
    });
  });

  it('rejects a wrong length, a wrong magic and a version other than 1', () => {
    assert.deepEqual(parseKdumpPacket(Buffer.from('402a301b', 'hex')), {
      valid: false,
      reason: 'wrong-length',
    });
    assert.deepEqual(parseKdumpPacket(Buffer.from('402a301b0100000000', 'hex')), {
      valid: false,
      reason: 'wrong-length',
    });
    assert.deepEqual(parseKdumpPacket(Buffer.from('deadbeef01000000', 'hex')), {
      valid: false,
      reason: 'bad-magic',
    });
    assert.deepEqual(parseKdumpPacket(encodeKdumpPacket('little-endian', 2)), {
      valid: false,
      reason: 'bad-version',
    });
    assert.deepEqual(parseKdumpPacket(Buffer.alloc(0)), { valid: false, reason: 'wrong-length' });
  });

  it('canonicalises source addresses: IPv4-mapped IPv6 becomes IPv4, IPv6 is compressed lower case', () => {
    assert.equal(canonicalAddress('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(canonicalAddress('2001:DB8:0:0::0010'), '2001:db8::10');
    assert.equal(canonicalAddress('fe80::1%eth0'), 'fe80::1');
    assert.equal(canonicalAddress('compute-0'), null);
  });
});

describe('KdumpStore on the real Redis', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('kdump-store');
  const store = new KdumpStore(redis, prefix);
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('records the last packet time per short hostname, seen by every reader', async () => {
    await store.recordPacket('compute-0.example.com', new Date('2026-07-28T10:00:00Z'));
    const other = new KdumpStore(redis, prefix);
    assert.equal((await other.lastPacketAt('compute-0'))?.toISOString(), '2026-07-28T10:00:00.000Z');
    assert.equal(await other.lastPacketAt('compute-1'), null);
  });

  it('keeps the latest time when packets are recorded out of order', async () => {
    await store.recordPacket('compute-2', new Date('2026-07-28T10:00:10Z'));
    await store.recordPacket('compute-2', new Date('2026-07-28T10:00:05Z'));
    assert.equal((await store.lastPacketAt('compute-2'))?.toISOString(), '2026-07-28T10:00:10.000Z');
  });

  it('tells whether a packet arrived within KDUMP_TIMEOUT', async () => {
    const now = new Date('2026-07-28T10:00:30Z');
    assert.equal(await store.packetWithin('compute-2', 30, now), true);
    assert.equal(await store.packetWithin('compute-2', 10, now), false);
    assert.equal(await store.packetWithin('compute-9', 30, now), false);
  });

  it('starts the kdump wait clock once and keeps its first start', async () => {
    const first = await store.startWait('compute-3', new Date('2026-07-28T10:00:00Z'));
    const again = await store.startWait('compute-3.example.com', new Date('2026-07-28T10:00:45Z'));
    assert.equal(again.toISOString(), first.toISOString());
    await store.clearWait('compute-3');
    assert.equal(await store.waitStartedAt('compute-3'), null);
  });

  it('prunes packet times older than a limit', async () => {
    await store.recordPacket('old-host', new Date('2026-07-28T09:00:00Z'));
    const dropped = await store.prune(300, new Date('2026-07-28T10:00:30Z'));
    assert.ok(dropped >= 1);
    assert.equal(await store.lastPacketAt('old-host'), null);
  });
});

describe('KdumpListener with the real fence_kdump_send', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('kdump-listener');
  const store = new KdumpStore(redis, prefix);
  const listener = new KdumpListener({
    port: 0,
    addressMap: new Map([
      ['127.0.0.1', 'compute-7.example.com'],
      ['::1', 'compute-v6'],
    ]),
    store,
    logger,
    reverseLookup: async () => [],
  });
  before(() => listener.start());
  after(async () => {
    await listener.stop();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('records packets of fence_kdump_send over IPv4 for the host of the address map', async () => {
    const sentAt = Date.now();
    await sendWithFenceKdumpSend(listener.port, 'ipv4', '127.0.0.1');
    const last = await waitFor(
      'the packet to be recorded',
      async () => (await store.lastPacketAt('compute-7')) ?? undefined,
    );
    assert.ok(last.getTime() >= sentAt - 1000);
    assert.ok(listener.counts.accepted >= 1);
  });

  it('records packets of fence_kdump_send over IPv6 (dual-stack socket)', async () => {
    await sendWithFenceKdumpSend(listener.port, 'ipv6', '::1');
    await waitFor(
      'the IPv6 packet to be recorded',
      async () => (await store.lastPacketAt('compute-v6')) ?? undefined,
    );
  });

  it('counts garbage datagrams by reason and records nothing for them', async () => {
    const own = new KdumpStore(redis, `${prefix}-garbage`);
    const garbageListener = new KdumpListener({
      port: 0,
      addressMap: new Map([['127.0.0.1', 'compute-g']]),
      store: own,
      logger,
    });
    await garbageListener.start();
    try {
      await send('127.0.0.1', garbageListener.port, Buffer.from('hello world'));
      await send('127.0.0.1', garbageListener.port, Buffer.from('deadbeef01000000', 'hex'));
      await send('127.0.0.1', garbageListener.port, encodeKdumpPacket('little-endian', 7));
      await send('127.0.0.1', garbageListener.port, Buffer.alloc(0));
      await waitFor('four garbage datagrams', () => {
        const { garbage } = garbageListener.counts;
        return garbage['wrong-length'] + garbage['bad-magic'] + garbage['bad-version'] === 4;
      });
      assert.deepEqual(garbageListener.counts.garbage, {
        'wrong-length': 2,
        'bad-magic': 1,
        'bad-version': 1,
      });
      assert.equal(garbageListener.counts.accepted, 0);
      assert.equal(await own.lastPacketAt('compute-g'), null);
      // a valid big-endian message from the same address is still accepted afterwards
      await send('127.0.0.1', garbageListener.port, encodeKdumpPacket('big-endian'));
      await waitFor('the valid packet', async () => (await own.lastPacketAt('compute-g')) ?? undefined);
    } finally {
      await garbageListener.stop();
      await deleteKeysWithPrefix(redis, `${prefix}-garbage`);
    }
  });

  it('counts a packet from an address with no host (no map entry, no PTR) and records nothing', async () => {
    const own = new KdumpStore(redis, `${prefix}-unknown`);
    const unknown = new KdumpListener({
      port: 0,
      addressMap: new Map(),
      store: own,
      logger,
      reverseLookup: async () => [],
    });
    await unknown.start();
    try {
      await send('127.0.0.1', unknown.port, encodeKdumpPacket());
      await waitFor('the unknown source to be counted', () => unknown.counts.unknownSource === 1);
      assert.equal((await own.allLastPackets()).size, 0);
    } finally {
      await unknown.stop();
    }
  });

  it('falls back to reverse DNS (short name of the first PTR answer) when the map has no entry', async () => {
    const own = new KdumpStore(redis, `${prefix}-dns`);
    const viaDns = new KdumpListener({
      port: 0,
      addressMap: new Map(),
      store: own,
      logger,
      host: '127.0.0.1',
    });
    await viaDns.start();
    try {
      const names = await dns.reverse('127.0.0.1').catch(() => [] as string[]);
      await sendWithFenceKdumpSend(viaDns.port, 'ipv4', '127.0.0.1');
      if (names[0]) {
        const expected = names[0].split('.')[0]!;
        await waitFor(
          `a packet recorded for ${expected}`,
          async () => (await own.lastPacketAt(expected)) ?? undefined,
        );
      } else {
        await waitFor('the unknown source to be counted', () => viaDns.counts.unknownSource === 1);
      }
    } finally {
      await viaDns.stop();
      await deleteKeysWithPrefix(redis, `${prefix}-dns`);
    }
  });
});
