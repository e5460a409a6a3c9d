import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import {
  createNetworkNamespaces,
  networkNamespacesUnavailable,
  type SimulatedMachine,
  startTcpProxy,
} from '../src/index.ts';

const redisPort = Number(new URL(process.env.LIFEGUARD_REDIS_URL ?? 'redis://127.0.0.1:6379').port || 6379);

/**
 * `redis-cli PING` run inside a machine (its `commandInside`), given at most `seconds` to answer
 * (asynchronously: the proxy answering it runs in this process).
 */
function pingFrom(machine: SimulatedMachine, host: string, seconds: number): Promise<string> {
  const { command, args } = machine.commandInside('timeout', [
    String(seconds),
    'redis-cli',
    '-h',
    host,
    '-p',
    String(redisPort),
    'PING',
  ]);
  return new Promise((resolve) => {
    execFile(command, args, { encoding: 'utf8' }, (_error, stdout) => resolve(stdout.trim()));
  });
}

describe('simulated machines (network namespaces joined by a bridge)', () => {
  it('reach the root namespace through an exposed port, lose it when cut, regain it when healed, and leave nothing behind', async () => {
    assert.equal(networkNamespacesUnavailable(), null);
    const network = await createNetworkNamespaces(2);
    const [first, second] = network.machines;
    try {
      await network.expose(redisPort);
      assert.equal(await pingFrom(first!, network.bridgeAddress, 5), 'PONG');
      assert.equal(await pingFrom(second!, network.bridgeAddress, 5), 'PONG');
      network.cut(first!);
      assert.equal(await pingFrom(first!, network.bridgeAddress, 2), '', 'cut off: no answer');
      assert.equal(
        await pingFrom(second!, network.bridgeAddress, 5),
        'PONG',
        'the other machine still reaches it',
      );
      network.heal(first!);
      assert.equal(await pingFrom(first!, network.bridgeAddress, 5), 'PONG');
    } finally {
      await network.remove();
    }
    const namespaces = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    for (const machine of network.machines) assert.ok(!namespaces.includes(machine.namespace));
    const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
    for (const machine of network.machines) assert.ok(!links.includes(machine.rootSideLink));
  });
});

describe('TcpProxy', () => {
  it('holds every reply while cut and delivers it in order once healed; adds its delay to a reply', async () => {
    const proxy = await startTcpProxy({ targetPort: redisPort });
    const redis = new Redis({ port: proxy.port, host: '127.0.0.1', lazyConnect: true });
    try {
      await redis.connect();
      assert.equal(await redis.ping(), 'PONG');
      proxy.cut();
      let answered = false;
      const pending = redis.echo('after the cut').then((value) => {
        answered = true;
        return value;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(answered, false, 'no answer while cut');
      proxy.heal();
      assert.equal(await pending, 'after the cut');
      proxy.setDelay(400);
      const started = performance.now();
      assert.equal(await redis.ping(), 'PONG');
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= 400, `the delay applies (took ${elapsed.toFixed(0)} ms)`);
    } finally {
      redis.disconnect();
      await proxy.stop();
    }
  });
});
