import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeMonitorReport, type MonitorReport } from '../src/index.ts';
import { novaTime, serviceView } from './support/service-view.ts';

const now = new Date('2026-12-04T10:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
/** The harness's report_interval, 2 s: a report is overdue after 3 s. */
const settings = { novaReportIntervalSeconds: 2 };

/** A Masakari host monitor's report about compute-1 that arrived `seconds` ago. */
const report = (seconds: number): MonitorReport => ({
  host: 'compute-1',
  source: 'masakari',
  reference: '3c3c1a48-2a43-4c53-9a57-1b4dbb0b6c1a',
  reportedAt: ago(seconds).toISOString(),
});

describe('judgeMonitorReport (docs/migrating-from-masakari.md#compute_host)', () => {
  const table: Array<{
    name: string;
    reported: number;
    updated: number | null;
    fields?: Record<string, unknown>;
    alreadyFailed?: boolean;
    noService?: boolean;
    kind: string;
    decideInSeconds?: number;
  }> = [
    {
      name: 'nova-compute reported after the report: the host runs',
      reported: 5,
      updated: 1,
      kind: 'host-reports',
    },
    {
      name: 'a report 1 s after the last one (within the clock tolerance) is no proof',
      reported: 5,
      updated: 4,
      kind: 'failed',
    },
    { name: 'no report since the report, and overdue: failed', reported: 2, updated: 4, kind: 'failed' },
    {
      name: 'no report since the report, not overdue yet: awaiting Nova',
      reported: 1,
      updated: 2,
      kind: 'awaiting-nova',
      decideInSeconds: 1,
    },
    { name: 'just overdue (3 s): failed', reported: 1, updated: 3, kind: 'failed' },
    {
      name: 'Nova gives no updated_at: awaiting Nova, no decision time',
      reported: 1,
      updated: null,
      kind: 'awaiting-nova',
    },
    {
      name: 'Nova already failed the host',
      reported: 1,
      updated: 40,
      alreadyFailed: true,
      kind: 'already-failed',
    },
    {
      name: 'forced down (an incident of its own)',
      reported: 1,
      updated: 40,
      fields: { forced_down: true },
      kind: 'already-failed',
    },
    {
      name: 'Nova lists no such compute service',
      reported: 1,
      updated: 1,
      noService: true,
      kind: 'no-service',
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const service = row.noService
        ? null
        : serviceView('compute-1', now, {
            updated_at: row.updated === null ? null : novaTime(ago(row.updated)),
            ...row.fields,
          });
      const judged = judgeMonitorReport(
        { report: report(row.reported), service, alreadyFailed: row.alreadyFailed ?? false, now },
        settings,
      );
      assert.equal(judged.kind, row.kind, judged.reason);
      if (judged.kind === 'awaiting-nova')
        assert.deepEqual(
          judged.decideAt,
          row.decideInSeconds === undefined ? null : new Date(now.getTime() + row.decideInSeconds * 1000),
        );
    });
  }

  it('says why in words', () => {
    const service = serviceView('compute-1', now, { updated_at: novaTime(ago(1)) });
    const judged = judgeMonitorReport({ report: report(5), service, alreadyFailed: false, now }, settings);
    assert.match(
      judged.reason,
      /nova-compute on compute-1 reported 4 s after the monitor's report: the host runs/,
    );
  });
});
