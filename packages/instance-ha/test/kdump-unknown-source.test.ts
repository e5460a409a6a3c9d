import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines, deleteKeysWithPrefix, randomKeyPrefix, testRedis, waitFor } from '@lifeguard/testing';
import { KdumpListener, KdumpStore } from '../src/index.ts';

const run = promisify(execFile);
const FENCE_KDUMP_SEND = '/usr/libexec/fence-agents/fence_kdump_send';

describe('kdump packets count only from configured or resolvable hosts (real fence_kdump_send)', () => {
  const redis = testRedis();
  const prefix = randomKeyPrefix('kdump-unknown');
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it('a packet from an address neither in KDUMP_ADDRESS_MAP nor with a PTR record is counted, logged and recorded for no host', async () => {
    const store = new KdumpStore(redis, prefix);
    const lines = new CapturedLines();
    const listener = new KdumpListener({
      port: 0,
      host: '127.0.0.1',
      // Only another address is configured: 127.0.0.1 is not a compute host here.
      addressMap: new Map([['192.0.2.17', 'compute-3']]),
      store,
      logger: createLogger({ service: 'kdump-test', level: 'debug', destination: lines }),
      // The resolver has no PTR record for the sender.
      reverseLookup: async () => [],
    });
    await listener.start();
    try {
      await run(FENCE_KDUMP_SEND, [
        '-p',
        String(listener.port),
        '-c',
        '2',
        '-i',
        '1',
        '-f',
        'ipv4',
        '127.0.0.1',
      ]);
      await waitFor(
        'both packets counted as unknown source',
        () => listener.counts.unknownSource === 2,
        15_000,
      );
      assert.equal(listener.counts.accepted, 0);
      assert.equal((await store.allLastPackets()).size, 0, 'no host has a kdump packet');
      assert.equal(await store.lastPacketAt('compute-3'), null);
      const warnings = lines.records().filter((entry) => String(entry.msg).includes('no host'));
      assert.equal(warnings.length, 1, 'one warning a minute per address');
      assert.equal(warnings[0]?.address, '127.0.0.1');
    } finally {
      await listener.stop();
    }
  });
});
