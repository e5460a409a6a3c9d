import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CapturedLines } from '@lifeguard/testing';
import { Counter } from 'prom-client';
import {
  AdminServer,
  ConfigError,
  createLogger,
  createMetricsRegistry,
  GracefulShutdown,
  withTimeout,
} from '../src/index.ts';

describe('health and metrics server', () => {
  it('serves /healthz, /readyz and /metrics with the process and the worker metrics', async () => {
    const registry = createMetricsRegistry('test-worker');
    const counter = new Counter({
      name: 'lifeguard_test_things_total',
      help: 'things',
      registers: [registry],
    });
    counter.inc(3);
    let ready = false;
    const server = new AdminServer({
      host: '127.0.0.1',
      port: 0,
      registry,
      logger: createLogger({ service: 'test', level: 'silent' }),
      readiness: [{ name: 'loop', check: () => ready }],
    });
    await server.start();
    const base = `http://127.0.0.1:${server.port}`;
    try {
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      const notReady = await fetch(`${base}/readyz`);
      assert.equal(notReady.status, 503);
      assert.deepEqual(((await notReady.json()) as { checks: unknown }).checks, { loop: 'failing' });
      ready = true;
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      server.markShuttingDown();
      assert.equal((await fetch(`${base}/readyz`)).status, 503, 'not ready while shutting down');
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, /lifeguard_test_things_total\{service="test-worker"\} 3/);
      assert.match(metrics, /process_cpu_seconds_total/);
      assert.equal((await fetch(`${base}/nothing`)).status, 404);
    } finally {
      await server.stop();
    }
  });
});

describe('graceful shutdown', () => {
  it('runs its steps in order, survives a failing step, and exits 0', async () => {
    const order: string[] = [];
    let exitCode: number | null = null;
    const shutdown = new GracefulShutdown({
      logger: createLogger({ service: 'test', level: 'silent' }),
      timeoutSeconds: 5,
      exit: (code) => {
        exitCode = code;
      },
    });
    shutdown.add('first', () => void order.push('first'));
    shutdown.add('broken', () => {
      throw new Error('boom');
    });
    shutdown.add('last', async () => void order.push('last'));
    await shutdown.shutdown('test');
    assert.deepEqual(order, ['first', 'last']);
    assert.equal(exitCode, 0);
  });

  it('exits 1 when a step hangs past the time budget (BullMQ close with Redis gone)', async () => {
    const lines = new CapturedLines();
    const exited = new Promise<number>((resolve) => {
      const shutdown = new GracefulShutdown({
        logger: createLogger({ service: 'test', destination: lines }),
        timeoutSeconds: 0.2,
        exit: resolve,
      });
      shutdown.add('first', () => undefined);
      shutdown.add('hang', () => new Promise(() => undefined));
      void shutdown.shutdown('test');
    });
    // The deadline's timer does not hold the process open (unref): this one does, until it fired.
    const keepAlive = setInterval(() => undefined, 1000);
    assert.equal(await exited.finally(() => clearInterval(keepAlive)), 1);
    assert.match(lines.text, /shutdown did not finish in time \(step \\"hang\\" still running\); exiting/);
    assert.match(lines.text, /"step":"hang"/);
  });

  it('withTimeout rejects naming the operation', async () => {
    await assert.rejects(
      withTimeout('worker close', new Promise(() => undefined), 50),
      /worker close did not finish within 50 ms/,
    );
  });
});

describe('a port that cannot be listened on', () => {
  it('stops start-up with a ConfigError naming the port setting, not a stack trace', async () => {
    const logger = createLogger({ service: 'test', level: 'silent' });
    const holder = new AdminServer({
      host: '127.0.0.1',
      port: 0,
      registry: createMetricsRegistry('a'),
      logger,
    });
    await holder.start();
    try {
      const second = new AdminServer({
        host: '127.0.0.1',
        port: holder.port,
        portKey: 'LIFEGUARD_HTTP_PORT',
        registry: createMetricsRegistry('b'),
        logger,
      });
      await assert.rejects(second.start(), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          `cannot listen on 127.0.0.1:${holder.port} (LIFEGUARD_HTTP_PORT): the address is already in use by another process; stop it or choose a free port`,
        );
        assert.deepEqual(
          error.problems.map((problem) => problem.key),
          ['LIFEGUARD_HTTP_PORT'],
        );
        return true;
      });
    } finally {
      await holder.stop();
    }
  });
});
