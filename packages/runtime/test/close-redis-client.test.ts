import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startPrivateRedis, waitFor } from '@lifeguard/testing';
import { Redis } from 'ioredis';
import { closeRedisClient } from '../src/index.ts';

describe('closeRedisClient', () => {
  it('ends a connected client with QUIT', async () => {
    const server = await startPrivateRedis(16);
    try {
      const client = new Redis(server.url(0), { lazyConnect: true });
      await client.connect();
      await closeRedisClient(client);
      assert.equal(client.status, 'end');
      // Twice is harmless: an ended client is left as it is.
      await closeRedisClient(client);
      assert.equal(client.status, 'end');
    } finally {
      await server.stop();
    }
  });

  it('ends a client that waits between two reconnect attempts, and rejects the command it held (ioredis would leave it "reconnecting" for good)', async () => {
    const server = await startPrivateRedis(16);
    // A long pause between attempts: the client is surely between two of them when it is closed.
    const client = new Redis(server.url(0), { lazyConnect: true, retryStrategy: () => 60_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await server.stop();
      await waitFor(
        'the client to wait for its next attempt',
        () => client.status === 'reconnecting',
        10_000,
      );
      const held = client.get('a-key').then(
        () => 'answered',
        (error: Error) => error.message,
      );
      await closeRedisClient(client);
      assert.equal(client.status, 'end');
      assert.equal(await held, 'Connection is closed.');
    } finally {
      client.disconnect();
    }
  });

  it('ends a client whose QUIT gets no answer within the bound', async () => {
    const server = await startPrivateRedis(16);
    const client = new Redis(server.url(0), { lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      // CLIENT PAUSE holds every command (QUIT too) for 30 s: only the hard disconnect ends it.
      await client.call('CLIENT', 'PAUSE', '30000', 'ALL');
      await closeRedisClient(client, 200);
      assert.equal(client.status, 'end');
    } finally {
      await server.stop();
    }
  });
});
