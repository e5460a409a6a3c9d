// Nova returning garbage and the Keystone token expiring, mid incident, on the real-Nova harness with
// Keystone, through the fault-injecting proxy of support/nova-fault-deployment.ts (lifeguard as an
// operator runs it, password auth, fence_ipmilan through ipmi_sim). Each fault strikes while a compute
// host dies (SIGKILL of its nova-compute, two servers on it):
// - Nova returning garbage: every third GET's JSON truncated, and the first evacuate of each server
//   carried out by Nova but answered with a load balancer's HTML 502 page (the reply is lost);
// - the Keystone token expiring mid incident: from the host.down on, Nova answers 401 to every token
//   issued before (as keystonemiddleware does for an expired token).
// Expected each time: the incident completes (fenced once, each server evacuated once, re-enabled), no
// other host is acted on, no evacuation before the fence. Figures are counted from the events
// exchange, the incident journal, Nova's migration records and the proxy's record of every request.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { recordFaultRow } from './support/fault-table.ts';
import { describeNovaFaults } from './support/nova-fault-deployment.ts';
import { type FaultRule, htmlErrorPage } from './support/openstack-fault-proxy.ts';

describeNovaFaults(
  'Nova returning garbage and the Keystone token expiring mid incident on real Nova (through a fault-injecting proxy)',
  (context) => {
    const { incidentUnderFault, assertCompletedOnce, answered } = context;

    it('Nova returning garbage (every third GET truncated; the first evacuate of each server done by Nova but answered with an HTML 502 page): each server is evacuated once, the incident completes', async () => {
      let gets = 0;
      const evacuatePosts = new Set<string>();
      const garbage: FaultRule = (request) => {
        if (request.service !== 'compute') return null;
        const evacuate = /^\/servers\/([^/]+)\/action$/.exec(request.path);
        if (request.method === 'POST' && evacuate && !evacuatePosts.has(evacuate[1]!)) {
          evacuatePosts.add(evacuate[1]!);
          return {
            kind: 'replace',
            status: 502,
            headers: { 'content-type': 'text/html' },
            body: htmlErrorPage(502, 'Bad Gateway'),
          };
        }
        if (request.method === 'GET' && ++gets % 3 === 0) return { kind: 'truncate' };
        return null;
      };
      const outcome = await incidentUnderFault('garbage', (phase) => {
        if (phase === 'killed') context.proxy.inject(garbage);
      });
      const requests = context.proxy.since(outcome.killedAt);
      const truncated = requests.filter((request) => request.fault === 'truncate').length;
      const lostReplies = requests.filter(
        (request) => request.fault === 'replace' && request.forwarded,
      ).length;
      const unexpected = context.deployment.run.text().match(/not JSON/g)?.length ?? 0;
      recordFaultRow({
        fault: 'Nova garbage: truncated JSON, evacuate reply lost as HTML 502',
        inFlight: '1 incident (2 instances)',
        eventsLost: outcome.eventsLost,
        duplicateEffects: outcome.duplicateEffects,
        secondsToResume: null,
        outcome: `${truncated} truncated answers, ${lostReplies} evacuate replies lost; errors "not JSON" logged ${unexpected}×; evacuated once each`,
      });
      assertCompletedOnce(outcome);
      assert.ok(truncated > 0, 'truncated answers were served');
      assert.equal(lostReplies, 2, 'both servers had an evacuate carried out by Nova whose reply was lost');
    });

    it('the Keystone token expiring mid incident (Nova answers 401 to every older token from host.down on): each worker authenticates again and the incident completes once', async () => {
      let expiredBefore = Number.POSITIVE_INFINITY;
      const expiredTokens = new Set<string>();
      const expiring: FaultRule = (request) => {
        if (request.service === 'compute' && request.token !== null) {
          if (request.at < expiredBefore) return null;
          if (expiredTokens.has(request.token)) {
            return {
              kind: 'answer',
              status: 401,
              headers: {
                'content-type': 'application/json',
                'www-authenticate': 'Keystone uri="http://127.0.0.1"',
              },
              body: JSON.stringify({
                error: {
                  code: 401,
                  title: 'Unauthorized',
                  message: 'The request you have made requires authentication.',
                },
              }),
            };
          }
        }
        return null;
      };
      const outcome = await incidentUnderFault('keystone', (phase) => {
        if (phase !== 'down') return;
        for (const request of context.proxy.requests)
          if (request.token !== null) expiredTokens.add(request.token);
        expiredBefore = Date.now();
        context.proxy.inject(expiring);
      });
      const since = expiredBefore;
      const refused = answered(since, [401]);
      const issued = context.proxy
        .since(since)
        .filter(
          (request) => request.service === 'identity' && request.method === 'POST' && request.status === 201,
        );
      // A refused call is repeated once with a new token: every 401 is followed by a call with a token
      // that was not expired, and no call was refused twice in a row.
      const afterRefusal = context.proxy
        .since(since)
        .filter(
          (request) =>
            request.service === 'compute' && request.token !== null && !expiredTokens.has(request.token),
        );
      recordFaultRow({
        fault: 'Keystone token expiring mid incident (401 from Nova)',
        inFlight: '1 incident (2 instances)',
        eventsLost: outcome.eventsLost,
        duplicateEffects: outcome.duplicateEffects,
        secondsToResume: refused[0] && afterRefusal[0] ? (afterRefusal[0].at - refused[0].at) / 1000 : null,
        outcome: `${refused.length}×401, ${issued.length} new tokens issued; calls repeated once with the new token`,
      });
      assertCompletedOnce(outcome);
      assert.ok(refused.length > 0, 'Nova refused the expired token');
      assert.ok(issued.length > 0, 'a new token was issued by Keystone');
      assert.ok(afterRefusal.length > 0, 'the calls went on with a new token');
      assert.ok(issued.length <= refused.length, 'no more tokens than refusals: one re-authentication each');
    });
  },
);
