// The status tables' view models: one row per worker kind, process, queue or dead letter, each cell's
// text as both renderings show it, and the tone the console marks it with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  brokerQueuesTable,
  cellText,
  deadLettersTable,
  leaderText,
  missingWorkerKindsText,
  type TableView,
  workerKindsTable,
  workersTable,
} from '../src/index.ts';

const texts = (view: TableView): string[][] => view.rows.map((row) => row.cells.map(cellText));
const tones = (view: TableView, column: number): Array<string | undefined> =>
  view.rows.map((row) => row.cells[column]?.tone);

describe('status tables as view models', () => {
  const workerKinds = [
    { kind: 'provisioning-blocks', live: 0, missing: true, detail: 'no live process registered' },
    { kind: 'port-status', live: null, missing: null, detail: 'unknown: RabbitMQ could not be read' },
    { kind: 'fencing-worker', live: 1, missing: false, detail: 'fencer-1' },
  ] as const;

  it('worker kinds: live, ok / MISSING / unknown, and a warning naming the missing kinds', () => {
    const view = workerKindsTable({ workerKinds });
    assert.deepEqual(
      view.columns.map((column) => column.title),
      ['kind', 'live', 'state', 'detail'],
    );
    assert.deepEqual(texts(view), [
      ['provisioning-blocks', '0', 'MISSING', 'no live process registered'],
      ['port-status', '-', 'unknown', 'unknown: RabbitMQ could not be read'],
      ['fencing-worker', '1', 'ok', 'fencer-1'],
    ]);
    assert.deepEqual(tones(view, 2), ['bad', 'muted', 'ok']);
    assert.equal(
      missingWorkerKindsText({ workerKinds }),
      'no live process of provisioning-blocks: what they do is not being done',
    );
    assert.equal(missingWorkerKindsText({ workerKinds: [workerKinds[2]] }), null);
  });

  it('workers: how long ago each started, with the exact time as the hint, and what /readyz answered', () => {
    const now = new Date('2026-12-01T10:00:00.000Z');
    const worker = {
      service: 'fencing-worker',
      instance: 'fencer-1',
      host: 'control-1',
      pid: 4242,
      httpHost: '127.0.0.1',
      httpPort: 9411,
      startedAt: '2026-12-01T09:59:30.000Z',
      refreshedAt: '2026-12-01T09:59:55.000Z',
      version: '0.1.0',
      expiresInMilliseconds: 10_000,
    };
    const view = workersTable(
      {
        workers: [
          { ...worker, readiness: 'ready' },
          { ...worker, instance: 'fencer-2', readiness: 'not-probed' },
          { ...worker, instance: 'fencer-3', readiness: 'unreachable' },
        ],
      },
      now,
    );
    assert.deepEqual(texts(view)[0], [
      'fencing-worker',
      'fencer-1',
      'control-1',
      '4242',
      '127.0.0.1:9411',
      '30.0 s ago',
      'ready',
    ]);
    assert.equal(view.rows[0]?.cells[5]?.hint, '2026-12-01 09:59:30Z');
    assert.deepEqual(tones(view, 6), ['ok', 'muted', 'bad']);
  });

  it('RabbitMQ queues: a queue never declared shows as such, without a consumer count', () => {
    const view = brokerQueuesTable([
      { queue: 'lifeguard.dead-letter', declared: true, messages: 0, consumers: 0 },
      { queue: 'lifeguard.provisioning-blocks.commands', declared: false, messages: null, consumers: null },
    ]);
    assert.deepEqual(texts(view), [
      ['lifeguard.dead-letter', '0', '0'],
      ['lifeguard.provisioning-blocks.commands', 'not declared', '-'],
    ]);
  });

  it('dead letters: the reason and the body are cut by the command only, the body shown as code', () => {
    const view = deadLettersTable([
      {
        id: 'a1b2c3d4e5f6',
        reason: null,
        queue: 'orders',
        exchange: '',
        routingKey: 'orders',
        deadLetteredAt: '2026-12-01T09:59:00.000Z',
        deadLetteredBy: 'rabbitmq',
        messageId: null,
        type: null,
        contentType: null,
        sizeBytes: 2,
        replayCount: 0,
        bodyPreview: '{}',
      },
    ]);
    assert.deepEqual(
      view.columns.filter((column) => column.textWidth !== undefined).map((column) => column.title),
      ['reason', 'body'],
    );
    assert.deepEqual(texts(view), [
      ['a1b2c3d4e5f6', '2026-12-01 09:59:00Z', 'rabbitmq', 'orders', 'orders', '-', '0', '{}'],
    ]);
    assert.equal(view.rows[0]?.cells[7]?.code, true);
  });

  it('the leader: who holds the lease and for how long, or that nothing detects failed hosts', () => {
    const leaderKey = 'lifeguard:node-monitor:leader';
    assert.equal(
      leaderText({ leaderKey, leader: { holder: 'monitor-a', token: 4, expiresInMilliseconds: 58_200 } }),
      'monitor-a (fencing token 4, lease lifeguard:node-monitor:leader, 58.2 s left)',
    );
    assert.equal(
      leaderText({ leaderKey, leader: null }),
      'none (nobody holds lifeguard:node-monitor:leader: no node monitor runs, nothing detects failed hosts)',
    );
  });
});
