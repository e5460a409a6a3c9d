// The console's confirm-fenced write action runs the CLI's confirmFenced: while the host still reports
// to Nova (cloud-sim, its nova-compute running) the page says it was refused, with Nova's evidence, and
// nothing is recorded; only the form's own host-is-reporting-override field records it anyway.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { IncidentStore } from '@lifeguard/instance-ha';
import { createOpenStackClients } from '@lifeguard/openstack';
import { createLogger } from '@lifeguard/runtime';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  hostDownEvidence,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { type RunningConsole, startConsole } from '../src/index.ts';

const TOKEN = 'console-confirm-operator-token-0123456789';

describe('the console confirm-fenced action while the host reports', () => {
  let sim: CloudSim;
  let vhost: TestVhost;
  let running: RunningConsole;
  const prefix = randomKeyPrefix('console-confirm');
  const redis = testRedis();
  const store = new IncidentStore(redis, prefix);

  before(async () => {
    sim = await startCloudSim({
      hosts: 3,
      servers: 0,
      redfishPort: false,
      model: { reportIntervalSeconds: 0.2, serviceDownTimeSeconds: 1 },
    });
    vhost = await createTestVhost('console-confirm');
    const entry = sim.cloudEntry('admin_token');
    running = await startConsole({
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LIFEGUARD_AMQP_URL: vhost.url,
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_REDIS_KEY_PREFIX: prefix,
        LIFEGUARD_HTTP_PORT: '0',
        LIFEGUARD_CONSOLE_OPERATOR_TOKEN: TOKEN,
        OS_AUTH_TYPE: 'admin_token',
        OS_TOKEN: String(entry.auth.token),
        OS_ENDPOINT: String(entry.auth.endpoint),
        INSTANCEHA_CONFIG_PATH: '/nonexistent/config.yaml',
      },
      logger: createLogger({ service: 'lifeguard-console', level: 'silent' }),
    });
  });

  after(async () => {
    await running?.stop();
    await sim.close();
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await vhost.delete();
  });

  const confirm = (fields: Record<string, string>) =>
    fetch(new URL('/actions/confirm-fenced', running.url), {
      method: 'POST',
      body: new URLSearchParams({ host: 'compute2', operator: 'alice', token: TOKEN, ...fields }),
    });

  it("refuses with Nova's evidence on the page, records nothing; the override field records it with the evidence", async () => {
    const nova = createOpenStackClients({
      env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'admin:admin', OS_ENDPOINT: sim.urls.compute },
      searchDirectories: [],
    }).compute;
    const [service] = await nova.listServices({ binary: 'nova-compute', host: 'compute2' });
    // The incident waits in fencing (its BMC never answered); compute2's nova-compute reports.
    const { incident } = await store.openIncident({
      host: 'compute2',
      serviceId: service!.id,
      fencingToken: 1,
      kdumpFenced: false,
      evidence: hostDownEvidence(service!.id, { zone: 'nova' }),
    });
    await store.setState(incident.id, 'fencing');
    await waitFor('compute2 up in Nova', async () => {
      const [now] = await nova.listServices({ binary: 'nova-compute', host: 'compute2' });
      return now?.state === 'up';
    });

    const shown = await (await fetch(new URL(`/incidents/${incident.id}`, running.url))).text();
    // The host reports: the advice is to rehabilitate it, not to confirm it off; the form stays, with
    // its override, for an operator certain that only its reports mislead.
    assert.match(shown, /data-advice="rehabilitate"/);
    assert.match(shown, /compute2 reports again \(Nova: state up/);
    assert.doesNotMatch(shown, /<code>lifeguard host confirm-fenced compute2/);
    assert.match(shown, /name="host-is-reporting-override" value="yes"/);

    const refused = await confirm({});
    assert.equal(refused.status, 409);
    const page = await refused.text();
    assert.match(
      page,
      /<p id="action-result" data-outcome="refused" class="unseen">confirm-fenced compute2: compute2 is reporting: refusing to record it as powered off; nothing was recorded<\/p>/,
    );
    assert.match(page, /<li>Nova: state up, updated_at \d+ s ago \(DELTA 30 s\): nova-compute is reporting/);
    assert.match(
      page,
      /<li>A host that reports is running: evacuating it would run its instances twice\. Check the machine \(BMC, PDU outlet, console\): .* this again with --host-is-reporting-override \(recorded with your name\)\.<\/li>/,
      'the explanation is one item, not the lines the terminal wraps',
    );
    assert.match(
      page,
      /<li>On this console: tick &quot;override \(--host-is-reporting-override\)&quot; in the confirm form of compute2's incident and send it again/,
    );
    assert.equal((await store.get(incident.id))?.fence, null, 'nothing recorded');

    // A box ticked with another value than the form's is a bad form, not an override.
    const malformed = await confirm({ 'host-is-reporting-override': 'on' });
    assert.equal(malformed.status, 400);
    assert.match(
      await malformed.text(),
      /host-is-reporting-override: host-is-reporting-override is &quot;yes&quot; \(ticked\) or absent/,
    );
    assert.equal((await store.get(incident.id))?.fence, null, 'nothing recorded');

    const overridden = await fetch(new URL('/actions/confirm-fenced', running.url), {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: new URLSearchParams({
        host: 'compute2',
        operator: 'alice',
        token: TOKEN,
        'host-is-reporting-override': 'yes',
      }),
    });
    assert.equal(overridden.status, 200, await overridden.clone().text());
    const body = (await overridden.json()) as { outcome: string; message: string };
    assert.deepEqual(
      [body.outcome, body.message],
      ['done', 'confirm-fenced compute2: operator-confirmed fence recorded'],
    );
    const fence = (await store.get(incident.id))?.fence;
    assert.equal(fence?.proof, 'operator-confirmed');
    assert.match(fence?.by ?? '', /^alice \(console /);
    assert.match(fence?.reportingOverride ?? '', /^Nova: state up, updated_at \d+ s ago \(DELTA 30 s\)/);
  });
});
