// Nova slow and Nova erroring, mid incident, on the real-Nova harness with Keystone: lifeguard, started
// as an operator starts it (every worker its own process, password auth against Keystone, hosts fenced
// by the real fence_ipmilan through ipmi_sim BMCs whose power-off SIGKILLs the host's nova-compute),
// talks to Keystone and the nova-api behind it through a fault-injecting HTTP proxy of this test
// (support/nova-fault-deployment.ts). Each fault strikes while a compute host dies (SIGKILL of its
// nova-compute, two servers on it):
// - Nova slow: every Compute API call answered 2 s late;
// - Nova erroring: every call answered 500 (Nova's JSON fault, or an HTML page) for 10 s after the
//   crash, then 503 with Retry-After on every other call for the rest of the incident.
// Expected each time: the incident completes (fenced once, each server evacuated once, re-enabled), no
// other host is acted on, no evacuation before the fence, and the retries are bounded. Figures are
// counted from the events exchange, the incident journal, Nova's migration records, the BMC's power
// commands and the proxy's own record of every request.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { recordFaultRow } from './support/fault-table.ts';
import { describeNovaFaults } from './support/nova-fault-deployment.ts';
import {
  type FaultAction,
  type FaultRule,
  htmlErrorPage,
  novaFault,
} from './support/openstack-fault-proxy.ts';

describeNovaFaults(
  'Nova slow and erroring mid incident on real Nova (through a fault-injecting proxy)',
  (context) => {
    const { incidentUnderFault, assertCompletedOnce, answered, monitorLogs } = context;

    it('Nova slow (every Compute API call 2 s late): the incident completes once; no healthy host is marked down', async () => {
      const delayed: FaultRule = (request) =>
        request.service === 'compute' ? { kind: 'delay', milliseconds: 2_000 } : null;
      const outcome = await incidentUnderFault('slow', (phase) => {
        if (phase === 'killed') context.proxy.inject(delayed);
      });
      const slowCalls = context.proxy
        .since(outcome.killedAt)
        .filter((request) => request.fault === 'delay').length;
      recordFaultRow({
        fault: 'Nova slow: every Compute API call 2 s late',
        inFlight: '1 incident (2 instances)',
        eventsLost: outcome.eventsLost,
        duplicateEffects: outcome.duplicateEffects,
        secondsToResume: null,
        outcome: `${slowCalls} slow calls; incident completed in ${((Date.parse(outcome.reenabled.occurredAt) - outcome.killedAt) / 1000).toFixed(1)} s; other hosts untouched`,
      });
      assertCompletedOnce(outcome);
      assert.ok(slowCalls > 0, 'calls went through the slow proxy');
    });

    it('Nova erroring (500 as JSON and as HTML for 10 s, then 503 with Retry-After on every other call): polls fail without deciding anything, retries are bounded, the incident completes once', async () => {
      let faultEndsAt = 0;
      let calls = 0;
      const novaError: FaultAction = {
        kind: 'answer',
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: novaFault(
          500,
          'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.',
        ),
      };
      const htmlError: FaultAction = {
        kind: 'answer',
        status: 500,
        headers: { 'content-type': 'text/html' },
        body: htmlErrorPage(500, 'Internal Server Error'),
      };
      const unavailable: FaultAction = {
        kind: 'answer',
        status: 503,
        headers: { 'content-type': 'application/json', 'retry-after': '1' },
        body: novaFault(503, 'Service Unavailable'),
      };
      const erroring: FaultRule = (request) => {
        if (request.service !== 'compute') return null;
        calls++;
        if (request.at < faultEndsAt) return calls % 2 === 0 ? novaError : htmlError;
        return calls % 2 === 0 ? unavailable : null;
      };
      const outcome = await incidentUnderFault('erroring', (phase) => {
        if (phase !== 'killed') return;
        faultEndsAt = Date.now() + 10_000;
        context.proxy.inject(erroring);
      });
      const served500 = answered(outcome.killedAt, [500]).length;
      const served503 = answered(outcome.killedAt, [503]).length;
      const failedPolls = monitorLogs('Poll failed', outcome.killedAt);
      const downDuringErrors = Date.parse(outcome.down.occurredAt) < faultEndsAt;
      // A 503 is retried with its Retry-After (a call makes at most 4 attempts, docs/openstack.md).
      const retriesLogged = context.deployment.run.lines.filter(
        (line) =>
          line.record && line.record.msg === 'OpenStack call failed; retrying' && line.record.status === 503,
      ).length;
      recordFaultRow({
        fault: 'Nova erroring: 500 (JSON and HTML) for 10 s, then 503 + Retry-After',
        inFlight: '1 incident (2 instances)',
        eventsLost: outcome.eventsLost,
        duplicateEffects: outcome.duplicateEffects,
        secondsToResume: (Date.parse(outcome.down.occurredAt) - faultEndsAt) / 1000,
        outcome: `${served500}×500, ${served503}×503 (${retriesLogged} retries logged); ${failedPolls.length} polls failed ("Poll failed"), none decided`,
      });
      assertCompletedOnce(outcome);
      assert.ok(served500 > 0 && served503 > 0, 'both faults were served');
      assert.ok(failedPolls.length > 0, 'the failed polls are logged');
      const messages = failedPolls.map((record) =>
        String((record.err as { message?: string } | undefined)?.message),
      );
      assert.ok(
        messages.some((message) => /HTTP 500: 500 Internal Server Error/.test(message)) &&
          messages.some((message) => /HTTP 500: Unexpected API Error/.test(message)),
        `the log names the status and Nova's message or the page's text: ${messages.join(' | ')}`,
      );
      assert.equal(downDuringErrors, false, 'no host.down decided while every poll failed');
      assert.ok(retriesLogged > 0 && retriesLogged <= served503, 'the 503s were retried (and logged)');
    });
  },
);
