import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import {
  encodeHeartbeat,
  HeartbeatListener,
  HeartbeatStore,
  loadHeartbeatKeys,
  verifyHeartbeat,
} from '../src/index.ts';

const key = Buffer.from('11'.repeat(32), 'hex');
const previous = Buffer.from('22'.repeat(32), 'hex');
const now = new Date('2026-07-28T10:00:00Z');
const logger = createLogger({ service: 'node-monitor-test', level: 'silent' });

describe('HBV2 heartbeat verification (docs/instance-ha-rules.md#heartbeats, docs/instance-ha-rules.md#short-host-names)', () => {
  it('accepts a valid heartbeat and shortens an FQDN', () => {
    assert.deepEqual(verifyHeartbeat(encodeHeartbeat('compute-0.example.com', key, now), [key], now), {
      valid: true,
      host: 'compute-0',
      sentAt: now,
    });
  });

  it('accepts the current and the previous key; rejects an unknown key and every heartbeat without keys', () => {
    assert.equal(verifyHeartbeat(encodeHeartbeat('a', previous, now), [key, previous], now).valid, true);
    const other = Buffer.from('33'.repeat(32), 'hex');
    assert.deepEqual(verifyHeartbeat(encodeHeartbeat('a', other, now), [key, previous], now), {
      valid: false,
      reason: 'hmac_failed',
    });
    assert.deepEqual(verifyHeartbeat(encodeHeartbeat('a', key, now), [], now), {
      valid: false,
      reason: 'no_key',
    });
  });

  it('rejects a tampered hostname (the HMAC covers it)', () => {
    const packet = encodeHeartbeat('compute-1', key, now);
    packet[12] = 'x'.charCodeAt(0);
    assert.equal(verifyHeartbeat(packet, [key], now).valid, false);
  });

  it('rejects stale (> 120 s old) and future (> 60 s ahead) timestamps', () => {
    assert.equal(
      verifyHeartbeat(encodeHeartbeat('a', key, new Date(now.getTime() - 119_000)), [key], now).valid,
      true,
    );
    assert.deepEqual(
      verifyHeartbeat(encodeHeartbeat('a', key, new Date(now.getTime() - 121_000)), [key], now),
      {
        valid: false,
        reason: 'timestamp_invalid',
      },
    );
    assert.equal(
      verifyHeartbeat(encodeHeartbeat('a', key, new Date(now.getTime() + 61_000)), [key], now).valid,
      false,
    );
  });

  it('rejects short packets, a wrong magic, bad hostnames; strips NUL padding; accepts 64 characters', () => {
    assert.deepEqual(verifyHeartbeat(Buffer.alloc(44), [key], now), { valid: false, reason: 'too_short' });
    const wrongMagic = encodeHeartbeat('a', key, now);
    wrongMagic.writeUInt32BE(0x48425631, 0);
    assert.deepEqual(verifyHeartbeat(wrongMagic, [key], now), { valid: false, reason: 'bad_magic' });
    for (const bad of ['-bad', 'has space', 'semi;colon', 'x'.repeat(65), 'bad.']) {
      assert.deepEqual(
        verifyHeartbeat(encodeHeartbeat(bad, key, now), [key], now),
        { valid: false, reason: 'hostname_invalid' },
        bad,
      );
    }
    assert.equal(verifyHeartbeat(encodeHeartbeat('x'.repeat(64), key, now), [key], now).valid, true);
    assert.equal(verifyHeartbeat(encodeHeartbeat('compute_1', key, now), [key], now).valid, true);
    const padded = verifyHeartbeat(encodeHeartbeat('compute-2\0\0', key, now), [key], now);
    assert.equal(padded.valid && padded.host, 'compute-2');
  });

  it("reads a host agent's report after the name's NUL: the host, the network, each process; the HMAC covers it", () => {
    const report = {
      network: 'storage',
      processes: { 'nova-compute': 'stopped', libvirtd: 'running' },
    } as const;
    assert.deepEqual(
      verifyHeartbeat(encodeHeartbeat('compute-3.example.com', key, now, report), [key], now),
      {
        valid: true,
        host: 'compute-3',
        sentAt: now,
        report,
      },
    );
    const tampered = encodeHeartbeat('compute-3', key, now, report);
    tampered.write('running', tampered.indexOf('stopped'));
    assert.deepEqual(verifyHeartbeat(tampered, [key], now), { valid: false, reason: 'hmac_failed' });
  });

  it('reads a name field whose NUL is not followed by a report as InstanceHA does: every NUL stripped', () => {
    const split = verifyHeartbeat(encodeHeartbeat('comp\0ute-4', key, now), [key], now);
    assert.deepEqual(split, { valid: true, host: 'compute-4', sentAt: now });
    // Text after the NUL that is neither a report nor a host name: the field is not a host name.
    assert.deepEqual(verifyHeartbeat(encodeHeartbeat('compute-4\0network=Bad Net', key, now), [key], now), {
      valid: false,
      reason: 'hostname_invalid',
    });
    // A report after a bad name: the name is still checked.
    assert.deepEqual(
      verifyHeartbeat(encodeHeartbeat('-bad', key, now, { network: 'storage', processes: {} }), [key], now),
      { valid: false, reason: 'hostname_invalid' },
    );
  });

  it('rejects a hostname that is not UTF-8', () => {
    const header = encodeHeartbeat('a', key, now).subarray(0, 12);
    const body = Buffer.concat([header, Buffer.from([0xff, 0xfe])]);
    const packet = Buffer.concat([body, createHmac('sha256', key).update(body).digest()]);
    assert.deepEqual(verifyHeartbeat(packet, [key], now), { valid: false, reason: 'hostname_invalid' });
  });
});

describe('heartbeat HMAC keys from files (hex, as InstanceHA)', () => {
  it('loads 0, 1 or 2 keys; skips missing and empty files; reports invalid hex', () => {
    const directory = mkdtempSync(join(tmpdir(), 'hb-keys-'));
    writeFileSync(join(directory, 'current'), `${'ab'.repeat(32)}\n`);
    writeFileSync(join(directory, 'empty'), '');
    writeFileSync(join(directory, 'bad'), 'not hex');
    const result = loadHeartbeatKeys([
      join(directory, 'current'),
      join(directory, 'empty'),
      join(directory, 'bad'),
      join(directory, 'missing'),
      undefined,
    ]);
    assert.deepEqual(result.keys, [Buffer.from('ab'.repeat(32), 'hex')]);
    assert.deepEqual(
      result.problems.map((problem) => problem.problem),
      ['not hex-encoded', 'cannot read: ENOENT'],
    );
  });
});

describe('HeartbeatListener on a real UDP socket and Redis', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('heartbeat');
  const store = new HeartbeatStore(redis, prefix);
  const listener = new HeartbeatListener({ port: 0, keys: [key], store, logger });
  before(() => listener.start());
  after(async () => {
    await listener.stop();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  const send = (address: string, payload: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const socket = createSocket(address.includes(':') ? 'udp6' : 'udp4');
      socket.send(payload, listener.port, address, (error) => {
        socket.close();
        if (error) reject(error);
        else resolve();
      });
    });

  it('records verified heartbeats over IPv4 and IPv6 for every replica to read', async () => {
    await send('127.0.0.1', encodeHeartbeat('compute-4.example.com', key));
    await send('::1', encodeHeartbeat('compute-6', key));
    const all = await waitFor('two heartbeats', async () => {
      const entries = await new HeartbeatStore(redis, prefix).all();
      return entries.size === 2 ? entries : undefined;
    });
    assert.deepEqual([...all.keys()].sort(), ['compute-4', 'compute-6']);
    assert.ok(listener.startedAt !== null);
  });

  it('counts rejected heartbeats by reason and records nothing for them', async () => {
    await send('127.0.0.1', encodeHeartbeat('intruder', Buffer.from('99'.repeat(32), 'hex')));
    await send('127.0.0.1', Buffer.from('garbage'));
    await waitFor(
      'two rejections',
      () => (listener.rejected.hmac_failed ?? 0) + (listener.rejected.too_short ?? 0) === 2,
    );
    assert.equal((await store.all()).has('intruder'), false);
  });

  it('prunes heartbeats older than a limit', async () => {
    await store.record('old', new Date(Date.now() - 700_000));
    assert.ok((await store.prune(600)) >= 1);
    assert.equal((await store.all()).has('old'), false);
  });
});
