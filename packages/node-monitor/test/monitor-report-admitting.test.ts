// A host monitor's report is recorded as admitted before its host's `host.down` goes out: the fencing
// worker re-checks a host as soon as `host.down` is published, and a host that still reports by DELTA
// is down for its host-down gate only by its admitted report (docs/migrating-from-masakari.md#compute_host).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  type AdmissionDecision,
  categoriseServices,
  MonitorReportStore,
  type ServiceView,
} from '@lifeguard/instance-ha';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import { MonitorReportDetection } from '../src/monitor-reports/monitor-report-detection.ts';

const redis = testRedis();
const prefix = randomKeyPrefix('report-admitting');
const store = new MonitorReportStore(redis, prefix);
const logger = createLogger({ service: 'node-monitor-test', level: 'silent' });
const now = new Date('2026-12-07T05:00:10Z');
const novaTime = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString().replace('Z', '');

describe('MonitorReportDetection.admitting', () => {
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
  });

  it("records an admitted host's report before any verdict, and only an admitted host's", async () => {
    // Both stopped reporting 4 s ago (NOVA_REPORT_INTERVAL 1 s: overdue), well within DELTA.
    const records = ['compute-1', 'compute-2'].map((host, index) => ({
      id: `svc-${index}`,
      binary: 'nova-compute',
      host,
      zone: 'nova',
      status: 'enabled',
      state: 'up',
      forced_down: false,
      updated_at: novaTime(4),
      disabled_reason: null,
    }));
    const categorisation = categoriseServices(records, { now, deltaSeconds: 60, openIncidents: new Map() });
    for (const host of ['compute-1', 'compute-2'])
      await store.record({ host, source: 'masakari', reference: `n-${host}`, reportedAt: `${novaTime(2)}Z` });
    const detection = new MonitorReportDetection({ store, config: { novaReportIntervalSeconds: 1 }, logger });
    const applied = await detection.apply(categorisation, { open: new Map(), now });
    assert.deepEqual(
      applied.categorisation.freshFailures.map((failure) => failure.service.host).sort(),
      ['compute-1', 'compute-2'],
      'both reports hold',
    );
    const service = applied.categorisation.services.find((each) => each.host === 'compute-1') as ServiceView;
    const decision = { admitted: [{ service, incident: null, resume: false, kdumpFenced: false }] };
    await detection.admitting(decision as Pick<AdmissionDecision, 'admitted'>);
    const admitted = await store.admittedByShortHost();
    assert.deepEqual([...admitted.keys()], ['compute-1'], 'the admitted host only');
    assert.equal(admitted.get('compute-1')?.reference, 'n-compute-1');
    assert.equal(
      await store.verdict('n-compute-1'),
      null,
      'no verdict yet: it names the incident, once published',
    );
  });
});
