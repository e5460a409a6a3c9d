// confirm-fenced on real Nova (Zed, the project's harness): a host's BMC does not answer, its nova-compute
// dies, lifeguard opens an incident and fencing fails; then the nova-compute starts again and Nova shows
// the host up. An operator's `lifeguard host confirm-fenced` is refused, naming Nova's evidence, and
// nothing is fenced or evacuated; the evacuation safety re-check refuses an operator-confirmed fence of
// a host that reports (refused while Nova shows it up, deferred once lifeguard forced it down);
// `--host-is-reporting-override` records the confirmation with the evidence.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkEvacuationSafety } from '@lifeguard/evacuation-worker';
import { IncidentStore, loadInstanceHaConfig } from '@lifeguard/instance-ha';
import { createOpenStackClients } from '@lifeguard/openstack';
import { createLogger } from '@lifeguard/runtime';
import { deleteKeysWithPrefix, hostDownEvidence, randomKeyPrefix, waitFor } from '@lifeguard/testing';
import { lifeguard } from '../../packages/cli/test/support/cli-harness.ts';
import { realNova } from './support/real-nova.ts';
import { RealNovaDeployment } from './support/real-nova-deployment.ts';

describe('confirm-fenced on real Nova while the host reports again', {
  timeout: 400_000,
}, () => {
  const nova = realNova();
  const victim = nova.hosts[0]!;
  const servers: string[] = [];
  let deployment: RealNovaDeployment;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    await nova.restore();
    servers.push(await nova.boot(`e2e-confirm-${randomUUID().slice(0, 6)}`, victim));
    deployment = await RealNovaDeployment.start({
      label: 'e2e-confirm-nova',
      fencing: 'noop',
      // Not a THRESHOLD test: on a loaded machine another compute may miss a report for DELTA.
      instanceHa: { THRESHOLD: 100 },
      // The victim's BMC: nothing answers on port 9, so its one fence attempt fails.
      fencingEntries: {
        [victim]: {
          agent: 'ipmi',
          ipaddr: '127.0.0.1',
          ipport: 9,
          login: 'admin',
          passwd: 'x',
          cipher: 3,
          timeout: 2,
        },
      },
      fencingWorkerEnvironment: {
        LIFEGUARD_FENCING_ATTEMPTS: '1',
        LIFEGUARD_FENCING_RECONCILE_SECONDS: '1',
      },
    });
    env = {
      LIFEGUARD_AMQP_URL: deployment.vhost.url,
      LIFEGUARD_REDIS_KEY_PREFIX: deployment.keyPrefix,
      OS_CLIENT_CONFIG_FILE: deployment.files.cloudsYaml('real-nova', nova.cloudEntry()),
      OS_CLOUD: 'real-nova',
    };
  });

  /**
   * The evacuation safety re-check, on real Nova now, of an operator-confirmed fence of the victim
   * recorded without the override (an incident of its own under a separate key prefix).
   */
  async function recheckOperatorFence(serviceId: string): Promise<{ kind: string; reason: string }> {
    const asidePrefix = randomKeyPrefix('e2e-confirm-recheck');
    const aside = new IncidentStore(deployment.redis, asidePrefix);
    try {
      const { incident } = await aside.openIncident({
        host: victim,
        serviceId,
        fencingToken: 1,
        kdumpFenced: false,
        evidence: hostDownEvidence(serviceId, { zone: 'nova' }),
      });
      const fenced = await aside.confirmFencedByOperator(victim, 'tester', null);
      const compute = createOpenStackClients({ env, searchDirectories: [] }).compute;
      const path = join(deployment.files.directory, 'config.yaml');
      const { config } = loadInstanceHaConfig({ path, env: {}, allowBelowMinimum: true });
      const verdict = await checkEvacuationSafety(
        compute,
        aside,
        config,
        false,
        {
          host: victim,
          serviceId,
          incidentId: incident.id,
          kdumpFenced: false,
          resume: false,
          fencedAt: fenced.fence!.at,
        },
        createLogger({ service: 'test', level: 'silent' }),
      );
      assert.notEqual(verdict.kind, 'proceed', 'an operator fence of a reporting host would be evacuated');
      return verdict as { kind: string; reason: string };
    } finally {
      await deleteKeysWithPrefix(deployment.redis, asidePrefix);
    }
  }

  after(async () => {
    try {
      await deployment?.stop();
    } finally {
      await nova.deleteServers(servers);
      await nova.restore();
    }
  });

  it('refused while nova-compute reports (evidence named, nothing fenced or evacuated); an operator fence without the override is refused (Nova up) or deferred (forced down, still reporting) by the evacuation re-check; the override is recorded', async () => {
    const { timeline } = deployment;
    // The host hangs (its nova-compute stops reporting), and comes back below: continued, it reports
    // again within report_interval, where a new nova-compute takes ten seconds and more to start.
    await nova.signalCompute(victim, 'STOP');
    const down = await timeline.waitFor('host.down', (event) => event.data.host === victim, 90_000);
    const incidentId = down.data.incidentId;
    await timeline.waitFor('host.fencing.failed', (event) => event.data.incidentId === incidentId, 90_000);

    // The host comes back: its nova-compute reports again and Nova shows it up.
    await nova.startCompute(victim);
    await waitFor(
      'the victim up in Nova',
      async () => (await nova.service(victim)).state === 'up',
      90_000,
      500,
    );
    const store = new IncidentStore(deployment.redis, deployment.keyPrefix);
    assert.equal(
      (await store.get(incidentId))?.state,
      'failed',
      'the incident waits for a person: fencing failed',
    );

    const refused = await lifeguard(['host', 'confirm-fenced', victim, '--operator', 'tester', '--yes'], env);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stderr,
      new RegExp(
        `^lifeguard: ${victim} is reporting: refusing to record it as powered off; nothing was recorded$`,
        'm',
      ),
    );
    assert.match(
      refused.stderr,
      /Nova: state up, updated_at \d+ s ago \(DELTA \d+ s\): nova-compute is reporting/,
    );
    assert.match(refused.stderr, /--host-is-reporting-override/);
    assert.equal((await store.get(incidentId))?.fence, null, 'nothing recorded');
    // Several reconcile periods later: nothing fenced, nothing evacuated, the server where it was.
    await new Promise((done) => setTimeout(done, 5000));
    const acted = timeline
      .forIncident(incidentId)
      .filter((event) =>
        ['host.fenced', 'host.evacuation.started', 'instance.evacuated'].includes(event.type),
      );
    assert.deepEqual(acted, []);
    const server = await nova.server(servers[0]!);
    assert.deepEqual([server['OS-EXT-SRV-ATTR:host'], server.status], [victim, 'ACTIVE']);
    const service = await nova.service(victim);
    assert.deepEqual([service.forced_down, service.status, service.state], [false, 'enabled', 'up']);

    // An operator-confirmed fence without the override (as if recorded before the host came back):
    // the evacuation safety re-check judges by the host's own reports and does not evacuate it.
    const upVerdict = await recheckOperatorFence(service.id);
    assert.equal(upVerdict.kind, 'refuse');
    assert.match(
      upVerdict.reason,
      new RegExp(
        `^the host is not down: ${victim} reports to Nova: state up, updated_at \\d+ s ago .*fenced operator-confirmed at `,
      ),
    );

    // With the override, the confirmation is recorded with Nova's evidence, and host.fenced carries it.
    const overridden = await lifeguard(
      ['host', 'confirm-fenced', victim, '--operator', 'tester', '--yes', '--host-is-reporting-override'],
      env,
    );
    assert.equal(overridden.code, 0, overridden.stderr);
    assert.match(overridden.stderr, new RegExp(`OVERRIDE: ${victim} is reporting \\(Nova: state up`));
    const fence = (await store.get(incidentId))?.fence;
    assert.deepEqual([fence?.proof, fence?.by], ['operator-confirmed', 'tester']);
    assert.match(fence?.reportingOverride ?? '', /^Nova: state up, updated_at \d+ s ago \(DELTA \d+ s\)/);
    const hostFenced = await timeline.waitFor(
      'host.fenced',
      (event) => event.data.incidentId === incidentId,
      60_000,
    );
    assert.equal(hostFenced.data.proof, 'operator-confirmed');
    assert.equal(hostFenced.data.reportingOverride, fence?.reportingOverride);

    // Now lifeguard has forced the host down (Nova says down) while it still reports: an operator's
    // fence without the override is deferred, never evacuated, until updated_at is older than DELTA.
    await waitFor(
      'lifeguard to force the victim down in Nova',
      async () => (await nova.service(victim)).forced_down,
      30_000,
      200,
    );
    assert.equal((await nova.service(victim)).state, 'down', 'forced_down: Nova says down');
    const forcedVerdict = await recheckOperatorFence(service.id);
    assert.equal(forcedVerdict.kind, 'defer');
    assert.match(
      forcedVerdict.reason,
      new RegExp(
        `^${victim} confirmed fenced by tester but its updated_at is not older than DELTA yet \\(state down, forced_down, updated_at \\d+ s ago`,
      ),
    );
  });
});
