import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  categoriseServices,
  type Incident,
  type InstanceHaConfig,
  loadInstanceHaConfig,
  type ServiceView,
  thresholdGate,
} from '@lifeguard/instance-ha';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { ADMISSION_GATES, newAdmissionRun } from '../src/admission/admission.ts';
import { type AdmissionRun, cycleSnapshot } from '../src/admission/admission-run.ts';
import { thresholdCycleGate } from '../src/admission/limit-gates.ts';
import { novaTime, serviceView } from './support/service-view.ts';

const now = new Date('2026-07-28T10:00:00Z');

function configWith(threshold: number): InstanceHaConfig {
  return loadInstanceHaConfig({
    path: '/nonexistent/config.yaml',
    env: { THRESHOLD: String(threshold), TAGGED_AGGREGATES: 'false' },
  }).config;
}

/** A cycle at G6: `services`, the failed hosts that survived G0–G5, the suspects. */
function runAt(
  services: ServiceView[],
  survivors: string[],
  suspects: string[],
  config: InstanceHaConfig,
  lines: CapturedLines,
): AdmissionRun {
  const categorisation = categoriseServices(
    services.map((service) => ({
      id: service.id,
      binary: 'nova-compute',
      host: service.host,
      zone: service.zone,
      status: service.status,
      state: service.state,
      forced_down: service.forcedDown,
      updated_at: service.updatedAt,
      disabled_reason: service.disabledReason,
    })),
    { now, deltaSeconds: config.deltaSeconds, openIncidents: new Map() },
  );
  const dependencies = {
    config,
    logger: createLogger({ service: 'node-monitor-test', level: 'info', destination: lines }),
  } as AdmissionRun['dependencies'];
  const run = newAdmissionRun(categorisation, new Map<string, Incident>(), now, dependencies);
  run.suspects.push(...suspects);
  run.survivors.push(...categorisation.services.filter((service) => survivors.includes(service.host)));
  return run;
}

describe("G6 is instance-ha's thresholdGate, judged once for the cycle (docs/architecture.md)", () => {
  const cloud = () => [
    serviceView('c-0', now, { state: 'down' }),
    serviceView('c-1', now, { state: 'down' }),
    serviceView('c-2', now),
    serviceView('c-3', now),
  ];

  it('admit() runs the threshold gate between evacuability and the aggregate limits', () => {
    const names = ADMISSION_GATES.map((gate) => gate.name);
    assert.ok(ADMISSION_GATES.includes(thresholdCycleGate));
    assert.equal(names.indexOf('threshold'), names.indexOf('evacuability') + 1);
    assert.equal(names.indexOf('aggregate-threshold'), names.indexOf('threshold') + 1);
  });

  it("allows 2 of 4 at THRESHOLD 50 with the gate's verdict and reason", async () => {
    const lines = new CapturedLines();
    const run = runAt(cloud(), ['c-0', 'c-1'], [], configWith(50), lines);
    const step = await thresholdCycleGate.run(run);
    assert.deepEqual(step, { kind: 'continue' });
    const gate = thresholdGate.judgeCycle(cycleSnapshot(run), { survivors: ['c-0', 'c-1'], suspects: [] });
    assert.deepEqual(run.decision.threshold, gate.result);
    assert.deepEqual(run.decision.thresholdExceeded, []);
    const logged = lines.records().find((record) => record.gate === 'threshold');
    assert.equal(logged?.verdict, 'pass');
    assert.equal(logged?.reason, '2 of 4 compute hosts impacted (50.0 %, THRESHOLD 50 %)');
    assert.match(String(logged?.msg), /Threshold: 2\/4 impacted = 50\.0% \(THRESHOLD 50%\): allowed/);
  });

  it('stops the cycle when the gate defers (a silent suspect makes 3 of 4 at THRESHOLD 50)', async () => {
    const lines = new CapturedLines();
    const config = configWith(50);
    const silentFor = (config.thresholdSuspectAgeSeconds + config.deltaSeconds) / 2;
    const services = cloud();
    services[2] = serviceView('c-2', now, {
      updated_at: novaTime(new Date(now.getTime() - silentFor * 1000)),
    });
    const run = runAt(services, ['c-0', 'c-1'], ['c-2'], config, lines);
    const step = await thresholdCycleGate.run(run);
    assert.deepEqual(step, { kind: 'stop', stoppedBy: 'threshold' });
    assert.equal(run.decision.threshold?.blocked, true);
    assert.deepEqual(run.decision.thresholdExceeded, [
      {
        scope: 'global',
        aggregate: null,
        impacted: 3,
        total: 4,
        percent: 75,
        threshold: 50,
        hosts: ['c-0', 'c-1'],
      },
    ]);
    const logged = lines.records().find((record) => record.gate === 'threshold');
    assert.equal(logged?.verdict, 'defer');
    assert.equal(logged?.reason, '3 of 4 compute hosts impacted (75.0 %, THRESHOLD 50 %)');
    // the same verdict and reason an action on one of these hosts gets (the suspect is silent to it too)
    assert.deepEqual(thresholdGate.judge(cycleSnapshot(run), 'c-0'), {
      gate: 'threshold',
      verdict: 'defer',
      reason: logged?.reason,
    });
  });

  it('is not judged without survivors (nothing to admit)', async () => {
    const run = runAt(cloud(), [], [], configWith(0), new CapturedLines());
    assert.deepEqual(await thresholdCycleGate.run(run), { kind: 'continue' });
    assert.equal(run.decision.threshold, null);
  });
});
