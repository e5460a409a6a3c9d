// The status tables are view models (@lifeguard/operator-views) rendered twice: as text by the
// `lifeguard` command and as HTML by the console. From the same view model both show the same columns
// and the same rows, cell by cell; a column added to a view model appears in both; and the console's
// queues page shows the rows `lifeguard status` and `lifeguard dlq list` print.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  brokerQueuesTable,
  cell,
  type DeadLetter,
  deadLettersTable,
  jobQueuesTable,
  type SystemStatus,
  type TableView,
  workerKindsTable,
  workersTable,
} from '@lifeguard/operator-views';
import { renderDeadLetters } from '../../packages/cli/src/commands/dead-letters.ts';
import { renderStatus } from '../../packages/cli/src/commands/status.ts';
import { renderTableView } from '../../packages/cli/src/output/table-view-text.ts';
import { renderFragment } from '../../packages/console/src/pages/html.ts';
import { queuesPage } from '../../packages/console/src/pages/queues-page.ts';
import { tableViewHtml } from '../../packages/console/src/pages/table-view-html.ts';

const now = new Date('2026-12-01T10:00:00.000Z');
const startedAt = '2026-12-01T09:58:00.000Z';

const status: SystemStatus = {
  workers: [
    {
      service: 'fencing-worker',
      instance: 'fencer-1',
      host: 'control-1',
      pid: 4242,
      httpHost: '127.0.0.1',
      httpPort: 9411,
      startedAt,
      refreshedAt: startedAt,
      version: '0.1.0',
      expiresInMilliseconds: 12_000,
      readiness: 'ready',
    },
    {
      service: 'node-monitor',
      instance: 'monitor-a',
      host: 'control-2',
      pid: 17,
      httpHost: '10.0.0.2',
      httpPort: 9410,
      startedAt,
      refreshedAt: startedAt,
      version: '0.1.0',
      expiresInMilliseconds: 3_000,
      readiness: 'unreachable',
    },
  ],
  workerKinds: [
    { kind: 'provisioning-blocks', live: 0, missing: true, detail: 'no live process registered' },
    { kind: 'port-status', live: null, missing: null, detail: 'unknown: RabbitMQ could not be read' },
    { kind: 'fencing-worker', live: 1, missing: false, detail: 'fencer-1' },
  ],
  leaderKey: 'lifeguard:node-monitor:leader',
  leader: { holder: 'monitor-a', token: 7, expiresInMilliseconds: 58_200 },
  jobQueues: [
    {
      queue: 'fencing',
      counts: {
        waiting: 2,
        prioritized: 0,
        active: 1,
        delayed: 0,
        'waiting-children': 0,
        failed: 3,
        completed: 40,
      },
    },
  ],
  brokerQueues: [
    { queue: 'lifeguard.fencing-worker.host-down', declared: true, messages: 1, consumers: 2 },
    { queue: 'lifeguard.provisioning-blocks.commands', declared: false, messages: null, consumers: null },
  ],
  brokerError: null,
  openIncidents: [],
  admission: null,
  failedPoll: null,
  capacityHolds: [],
};

const letter = (id: string, reason: string): DeadLetter => ({
  id,
  reason,
  queue: 'lifeguard.fencing-worker.host-down',
  exchange: 'lifeguard.events',
  routingKey: 'host.down',
  deadLetteredAt: '2026-12-01T09:59:00.000Z',
  deadLetteredBy: 'fencing-worker',
  messageId: `message-${id}`,
  type: 'host.down',
  contentType: 'application/json',
  sizeBytes: 26,
  replayCount: 1,
  bodyPreview: '{"type":"not-a-host-down"}',
});
const letters = [letter('a1b2c3d4e5f6', 'not a valid host.down event'), letter('0f9e8d7c6b5a', 'rejected')];

/** The rows of a text table: the header, then each row, cells split where two or more spaces are. */
function textRows(text: string): string[][] {
  return text.split('\n').map((line) => line.trim().split(/\s{2,}/));
}

/** An HTML fragment's cells as text: tags removed, entities decoded. */
function htmlText(fragment: string): string {
  return fragment
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

/** The rows of the HTML table with that id: the header's titles, then each row's cells, as text. */
function htmlRows(page: string, id: string): string[][] {
  const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(page)?.[1];
  assert.ok(table !== undefined, `no table#${id}`);
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<t[hd]>([\s\S]*?)<\/t[hd]>/g)].map((each) => htmlText(each[1]!)),
  );
}

/** Both renderings of one view model, as rows of text; the command's header is upper case. */
function bothRenderings(view: TableView): { text: string[][]; html: string[][] } {
  const [textHeader, ...text] = textRows(renderTableView(view));
  const [htmlHeader, ...html] = htmlRows(renderFragment(tableViewHtml(view)), view.id);
  return { text: [textHeader!, ...text], html: [htmlHeader!.map((title) => title.toUpperCase()), ...html] };
}

describe('status tables: one view model, rendered as text by the command and as HTML by the console', () => {
  const tables: ReadonlyArray<readonly [string, TableView]> = [
    ['worker kinds', workerKindsTable(status)],
    ['workers', workersTable(status, now)],
    ['BullMQ queues', jobQueuesTable(status)],
    ['RabbitMQ queues', brokerQueuesTable(status.brokerQueues!)],
    ['dead letters', deadLettersTable(letters)],
  ];

  for (const [name, view] of tables) {
    it(`show the same columns and rows: ${name}`, () => {
      const { text, html } = bothRenderings(view);
      assert.equal(html.length, view.rows.length + 1, 'a header and one row per row of the view model');
      assert.deepEqual(text, html);
    });
  }

  it('show a column added to a view model in both', () => {
    const view = workerKindsTable(status);
    const widened: TableView = {
      ...view,
      columns: [...view.columns, { title: 'since' }],
      rows: view.rows.map((row, index) => ({ ...row, cells: [...row.cells, cell(`${index + 1} min`)] })),
    };
    const { text, html } = bothRenderings(widened);
    assert.deepEqual(text, html);
    assert.deepEqual(
      text.map((row) => row.at(-1)),
      ['SINCE', '1 min', '2 min', '3 min'],
    );
  });

  it('cut a long text to its column width in the command only; the console shows it whole', () => {
    const reason = `the consumer could not parse the body: ${'x'.repeat(80)}`;
    const view = deadLettersTable([letter('5a5a5a5a5a5a', reason)]);
    const { text, html } = bothRenderings(view);
    const column = view.columns.findIndex((each) => each.title === 'reason');
    assert.equal(html[1]![column], reason);
    assert.equal(text[1]![column], `${reason.slice(0, 59)}…`);
  });
});

describe('the console queues page and the command show the same rows', () => {
  const page = renderFragment(
    queuesPage(
      {
        status: { ok: true, value: status },
        deadLetters: { ok: true, value: { count: 2, letters, readAt: now.toISOString(), stale: false } },
      },
      false,
      now,
    ),
  );

  const literally = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  /** Each row of the page's table, as a line of the command's output (cells two or more spaces apart). */
  const asLines = (id: string): RegExp[] =>
    htmlRows(page, id)
      .slice(1)
      .map((cells) => new RegExp(`^${cells.map(literally).join('\\s{2,}')}$`, 'm'));

  it('of `lifeguard status`: worker kinds, workers, BullMQ and RabbitMQ queues, and the leader', () => {
    const text = renderStatus(status, now);
    for (const id of ['worker-kinds', 'workers', 'job-queues', 'broker-queues']) {
      const lines = asLines(id);
      assert.equal(lines.length > 0, true, `rows in table#${id}`);
      for (const line of lines) assert.match(text, line, `table#${id}`);
    }
    assert.match(
      page,
      /<p id="leader">Node monitor leader: monitor-a \(fencing token 7, lease lifeguard:node-monitor:leader, 58\.2 s left\)<\/p>/,
    );
    assert.match(
      text,
      /^Node monitor leader: monitor-a \(fencing token 7, lease lifeguard:node-monitor:leader, 58\.2 s left\)$/m,
    );
  });

  it('of `lifeguard dlq list`', () => {
    const text = renderDeadLetters(letters, letters.length);
    const lines = asLines('dead-letters');
    assert.equal(lines.length, 2);
    for (const line of lines) assert.match(text, line);
  });
});
