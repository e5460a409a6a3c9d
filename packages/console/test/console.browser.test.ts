// The console in headless Chromium (Debian's chromium driven by playwright-core) against lifeguard as
// `npm start` runs it on the simulated cloud: every worker its own process, cloud-sim with the demo
// layout, real RabbitMQ and Redis, Nova's timings shortened (report every second, down after 4 s,
// POLL 1 s, DELTA 4 s). The pages are never reloaded by the test: what changes arrives through the
// console's live updates (server-sent events fed by the events exchange).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CloudSim } from '@lifeguard/cloud-sim';
import {
  DEAD_LETTER_QUEUE,
  NATIVE_AGENTS_EXCHANGE,
  PROVISIONING_COMMANDS_EXCHANGE,
  QUEUES,
} from '@lifeguard/contracts';
import { createOpenStackClients } from '@lifeguard/openstack';
import { createLogger, EventJournal } from '@lifeguard/runtime';
import { type Stack, startStack } from '@lifeguard/stack';
import {
  createTestVhost,
  deleteKeysWithPrefix,
  FAST_CLOUD_TIMINGS,
  FAST_INSTANCE_HA,
  lifeguardProcessRun,
  REDIS_URL,
  randomKeyPrefix,
  type TestVhost,
  testRedis,
  waitFor,
} from '@lifeguard/testing';
import { connect } from 'amqplib';
import type { Redis } from 'ioredis';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { type RunningConsole, startConsole } from '../src/index.ts';
import { launchBrowser } from './support/browser.ts';

const TOKEN = 'console-test-operator-token-0123456789';
/** Where the page screenshots go: docs/console with LIFEGUARD_CONSOLE_SCREENSHOTS=docs, else a temporary folder. */
const screenshotDirectory =
  process.env.LIFEGUARD_CONSOLE_SCREENSHOTS === 'docs'
    ? resolve(import.meta.dirname, '../../../docs/console')
    : mkdtempSync(join(tmpdir(), 'lifeguard-console-shots-'));

function cleanEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('OS_') && !name.startsWith('LIFEGUARD_') && !name.startsWith('INSTANCEHA_'))
      env[name] = value;
  }
  return env;
}

describe('the console in Chromium, against the simulated cloud with every worker running', {
  timeout: 420_000,
}, () => {
  let vhost: TestVhost;
  let redis: Redis;
  let keyPrefix: string;
  let stateDirectory: string;
  let stack: Stack;
  let sim: CloudSim;
  let console_: RunningConsole;
  let browser: { context: BrowserContext; close: () => Promise<void> };
  let consoleEnv: NodeJS.ProcessEnv;

  before(async () => {
    vhost = await createTestVhost('console-browser');
    redis = testRedis();
    keyPrefix = randomKeyPrefix('console-browser');
    stateDirectory = mkdtempSync(join(tmpdir(), 'lifeguard-console-stack-'));
    stack = await startStack({
      amqpUrl: vhost.url,
      redisUrl: REDIS_URL,
      keyPrefix,
      stateDirectory,
      run: lifeguardProcessRun(),
      httpPorts: 'free',
      inheritEnvironment: false,
      logFormat: 'silent',
      readyTimeoutSeconds: 180,
      cloud: {
        kind: 'simulated',
        ...FAST_CLOUD_TIMINGS,
      },
      instanceHa: { ...FAST_INSTANCE_HA },
    });
    sim = stack.cloudSim!;
    consoleEnv = {
      ...cleanEnvironment(),
      ...stack.clientEnvironment(),
      LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
      LIFEGUARD_HTTP_PORT: '0',
      LIFEGUARD_CONSOLE_OPERATOR_TOKEN: TOKEN,
      LIFEGUARD_CONSOLE_REFRESH_SECONDS: '2',
      LIFEGUARD_INSTANCE_NAME: 'console-under-test',
    };
    console_ = await startConsole({
      env: consoleEnv,
      logger: createLogger({ service: 'lifeguard-console', level: 'warn' }),
    });
    await waitFor('the console follows the events exchange', () => console_.feed.running, 30_000);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await console_?.stop();
    await stack?.stop();
    rmSync(stateDirectory, { recursive: true, force: true });
    await deleteKeysWithPrefix(redis, keyPrefix);
    redis.disconnect();
    await vhost?.delete();
    if (process.env.LIFEGUARD_CONSOLE_SCREENSHOTS !== 'docs')
      rmSync(screenshotDirectory, { recursive: true, force: true });
  });

  async function open(path: string): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(new URL(path, console_.url).href);
    await page.locator('#live[data-state="live"]').waitFor({ timeout: 15_000 });
    return page;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    mkdirSync(screenshotDirectory, { recursive: true });
    await page.screenshot({ path: join(screenshotDirectory, `${name}.png`), fullPage: true });
  }

  it('a killed host: the incident appears on the open incidents page, and its timeline fills in live from down to re-enabled', async () => {
    const host = stack.layout!.protectedHosts[1]!;
    const incidents = await open('/incidents');
    assert.equal(
      await incidents.locator(`a.incident-link[data-host="${host}"]`).count(),
      0,
      'no incident yet',
    );
    sim.killHost(host);

    const link = incidents.locator(`a.incident-link[data-host="${host}"]`);
    await link.waitFor({ timeout: 60_000 });
    const incidentId = (await link.textContent())!.trim();
    await link.click();
    await incidents.waitForURL(`**/incidents/${incidentId}`);
    await incidents.locator('#live[data-state="live"]').waitFor({ timeout: 15_000 });
    await incidents.locator('#timeline-end[data-end="reenabled"]').waitFor({ timeout: 180_000 });

    const events = await incidents
      .locator('#timeline li')
      .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.event));
    const order = ['host.down', 'host.fenced', 'host.evacuation.started', 'host.evacuated', 'host.reenabled'];
    const positions = order.map((type) => events.indexOf(type as never));
    assert.ok(
      positions.every((position) => position >= 0),
      `every step is drawn: ${events.join(', ')}`,
    );
    assert.deepEqual(
      [...positions].sort((a, b) => a - b),
      positions,
      `in order: ${events.join(', ')}`,
    );
    assert.ok(events.includes('instance.evacuated'), 'each instance from evacuate to ACTIVE');
    const fenced = await incidents.locator('#timeline li[data-event="host.fenced"]').textContent();
    assert.match(fenced ?? '', /proof power-off-confirmed by fence_redfish/);
    const instance = await incidents
      .locator('#timeline li[data-event="instance.evacuated"]')
      .first()
      .textContent();
    assert.match(instance ?? '', /ACTIVE.*evacuate to ACTIVE on \S+ in [\d.]+ s, \d+ attempt/s);
    assert.doesNotMatch(instance ?? '', new RegExp(`on ${host} `), 'never onto the failed host');
    assert.match((await incidents.locator('#evidence').textContent()) ?? '', /down/);
    assert.equal(
      await incidents.locator('.axis .tick').count(),
      events.length,
      'each step placed on the time axis',
    );
    await screenshot(incidents, 'incident');

    await incidents.goto(new URL('/incidents', console_.url).href);
    await incidents
      .locator(`#recent-incidents a.incident-link[data-host="${host}"]`)
      .waitFor({ timeout: 30_000 });
    await screenshot(incidents, 'incidents');
    await incidents.close();
  });

  it('a partition of most hosts shows THRESHOLD blocking on the fleet page, with no headroom left', async () => {
    const fleet = await open('/');
    const headroom = Number(await fleet.locator('#headroom').textContent());
    assert.ok(headroom >= 1, `headroom before the partition: ${headroom}`);
    const partitioned = stack.layout!.protectedHosts.slice(0, 7);
    sim.partition(partitioned);
    try {
      await fleet.locator('#threshold[data-blocked="true"]').waitFor({ timeout: 60_000 });
      assert.match(
        (await fleet.locator('#threshold').textContent()) ?? '',
        /BLOCKING.*fencing and\s+evacuation are stopped/s,
      );
      assert.equal(await fleet.locator('#headroom').count(), 0, 'no headroom is offered while blocked');
      // The node monitor's own verdict, from its threshold.exceeded event.
      await fleet.locator('table#gates tr', { hasText: 'THRESHOLD' }).first().waitFor({ timeout: 60_000 });
      await screenshot(fleet, 'fleet-threshold');
    } finally {
      sim.heal(partitioned);
    }
    await fleet.locator('#threshold[data-blocked="false"]').waitFor({ timeout: 60_000 });
    await screenshot(fleet, 'fleet');
    await fleet.close();
  });

  it('a write action without the operator token is refused and changes nothing; with it, it runs and is recorded with who did it', async () => {
    const host = stack.layout!.protectedHosts[1]!;
    const journal = new EventJournal(redis, keyPrefix);
    const actionsBefore = (await journal.recent(1000)).filter(
      (event) => event.type === 'operator.action',
    ).length;

    const page = await open(`/`);
    const form = page.locator(`form[data-action="rehabilitate"]:has(input[name="host"][value="${host}"])`);
    assert.equal(await form.count(), 0, 'the host is back in service: no rehabilitate form');
    // Straight requests, as a script or another site would send them.
    const bare = await fetch(new URL('/actions/rehabilitate', console_.url), {
      method: 'POST',
      body: new URLSearchParams({ host, operator: 'mallory' }),
    });
    assert.equal(bare.status, 401);
    assert.match(await bare.text(), /needs the operator token; nothing was changed/);
    const wrong = await fetch(new URL('/actions/confirm-fenced', console_.url), {
      method: 'POST',
      headers: { authorization: 'Bearer not-the-token', accept: 'application/json' },
      body: new URLSearchParams({ host, operator: 'mallory' }),
    });
    assert.equal(wrong.status, 401);
    assert.deepEqual(await wrong.json(), {
      outcome: 'unauthorised',
      message: 'the operator token is wrong; nothing was changed',
    });

    // In the browser: the replay form of the queues page with a wrong token.
    await page.goto(new URL('/queues', console_.url).href);
    await page.evaluate(
      ([target]) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = '/actions/rehabilitate';
        for (const [name, value] of Object.entries({
          host: target!,
          operator: 'mallory',
          token: 'guessed-token-123456',
        })) {
          const input = document.createElement('input');
          input.name = name;
          input.value = value;
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      },
      [host],
    );
    await page.locator('#action-result').waitFor();
    assert.equal(await page.locator('#action-result').getAttribute('data-outcome'), 'unauthorised');
    assert.match((await page.locator('#action-result').textContent()) ?? '', /operator token is wrong/);
    await page.close();

    const refusedActions = (await journal.recent(1000)).filter(
      (event) => event.type === 'operator.action',
    ).length;
    assert.equal(refusedActions, actionsBefore, 'a refused request records no action: nothing ran');

    const allowed = await fetch(new URL('/actions/rehabilitate', console_.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
      body: new URLSearchParams({ host, operator: 'alice' }),
    });
    const answer = (await allowed.json()) as { outcome: string; message: string };
    assert.equal(allowed.status, 200, answer.message);
    assert.equal(answer.outcome, 'done');
    const recorded = await waitFor('the operator.action event', async () =>
      (await journal.recent(1000)).find((event) => event.type === 'operator.action'),
    );
    assert.equal(recorded.type, 'operator.action');
    if (recorded.type === 'operator.action') {
      assert.deepEqual(
        [recorded.data.action, recorded.data.operator, recorded.data.host, recorded.data.outcome],
        ['rehabilitate', 'alice', host, 'done'],
      );
      assert.match(recorded.data.via, /console-under-test/);
    }
  });

  /**
   * Puts a message the fencing worker refuses on its queue and waits until it is dead-lettered: the
   * queues page lists the dead-letter queue when it loads (a live refresh only counts it).
   */
  async function deadLetterOne(messageId: string): Promise<void> {
    const connection = await connect(vhost.url);
    try {
      const channel = await connection.createConfirmChannel();
      const before = (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount;
      channel.sendToQueue(QUEUES.hostDown, Buffer.from('{"type":"not-a-host-down"}'), { messageId });
      await channel.waitForConfirms();
      await waitFor(
        'the message dead-lettered',
        async () => (await channel.checkQueue(DEAD_LETTER_QUEUE)).messageCount > before,
        30_000,
      );
    } finally {
      await connection.close();
    }
  }

  it('lists a dead letter with its reason, and replays it from its form with the operator token, recorded with who did it', async () => {
    await deadLetterOne('console-test-letter');
    const page = await open('/queues');
    const row = page.locator('table#dead-letters tr', { hasText: QUEUES.hostDown });
    await row.first().waitFor({ timeout: 30_000 });
    assert.match(
      (await row.first().textContent()) ?? '',
      /host\.down event/,
      'the reason names the contract it broke',
    );
    await screenshot(page, 'queues');
    const form = row.first().locator('form[data-action="replay"]');
    await form.locator('input[name="operator"]').fill('bob');
    await form.locator('input[name="token"]').fill(TOKEN);
    await form.locator('button[type="submit"]').click();
    // The replay is a confirmed publish and a Redis write: bounded for a loaded machine. Should it run
    // out, the page the browser shows then is part of the failure.
    await page
      .locator('#action-result')
      .waitFor({ timeout: 90_000 })
      .catch(async (error: Error) => {
        const shown = await page
          .evaluate(() => `${location.href}: ${document.body?.textContent ?? ''}`)
          .catch((cause: Error) => `(the page could not be read: ${cause.message})`);
        throw new Error(`${error.message}\nthe browser shows ${shown.slice(0, 2000)}`);
      });
    assert.equal(await page.locator('#action-result').getAttribute('data-outcome'), 'done');
    assert.match(
      (await page.locator('#action-result').textContent()) ?? '',
      /replay-dead-letter \S+: replayed/,
    );
    await page.close();
    const journal = new EventJournal(redis, keyPrefix);
    const recorded = await waitFor('the replay recorded', async () =>
      (await journal.recent(1000)).find(
        (event) => event.type === 'operator.action' && event.data.action === 'replay-dead-letter',
      ),
    );
    assert.equal(recorded.type === 'operator.action' && recorded.data.operator, 'bob');
  });

  it('a live refresh never empties a form the operator typed into, even a refresh read while they typed', async () => {
    await deadLetterOne('console-test-held-form');
    const page = await open('/queues');
    const form = page.locator('form[data-action="replay"]').first();
    await form.waitFor({ timeout: 30_000 });
    // The next refresh's read of the page is held until the name and the token are typed and the
    // focus has left the form, as when the operator switches to a password manager.
    const held: Route[] = [];
    const fragmentReads = (url: URL) => url.pathname === '/queues';
    await page.route(fragmentReads, async (route) => {
      if (route.request().headers()['x-lifeguard-fragment'] === 'main') held.push(route);
      else await route.continue();
    });
    await waitFor('a live refresh reading the page', () => held.length > 0, 30_000, 50);
    await form.locator('input[name="operator"]').fill('carol');
    await form.locator('input[name="token"]').fill('typed-not-sent');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    for (const route of held.splice(0)) await route.continue();
    await page.locator('#live[data-held="form"]').waitFor({ timeout: 30_000 });
    assert.match(
      (await page.locator('#live').textContent()) ?? '',
      /not refreshed while a form holds what you typed/,
    );
    assert.equal(await form.locator('input[name="operator"]').inputValue(), 'carol');
    assert.equal(await form.locator('input[name="token"]').inputValue(), 'typed-not-sent');

    // Emptied again, the form no longer holds the page: the live refreshes resume.
    await page.unroute(fragmentReads);
    const updatedBefore = await page.evaluate(() => document.body.dataset.updatedAt ?? '');
    await form.locator('input[name="operator"]').fill('');
    await form.locator('input[name="token"]').fill('');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.locator('#live[data-held=""]').waitFor({ timeout: 30_000 });
    await waitFor(
      'a live refresh put in place',
      async () => (await page.evaluate(() => document.body.dataset.updatedAt ?? '')) !== updatedBefore,
      30_000,
      100,
    );
    await page.close();
  });

  it('shows what Nova reports as text: a disabled_reason holding <script> is escaped, never run', async () => {
    const host = stack.layout!.unprotectedHosts[0]!;
    const compute = createOpenStackClients({ env: consoleEnv }).compute;
    const [service] = await compute.listServices({ binary: 'nova-compute', host });
    const reason =
      '<script>window.__lifeguardInjected = true</script><img src=x onerror="window.__lifeguardInjected=true">';
    await compute.updateService(service!.id, { status: 'disabled', disabled_reason: reason });
    try {
      const fleet = await open('/');
      const row = fleet.locator('tr', { has: fleet.locator(`span.host[data-host="${host}"]`) });
      await row.filter({ hasText: '<script>' }).waitFor({ timeout: 30_000 });
      assert.match(
        (await row.textContent()) ?? '',
        /<script>window.__lifeguardInjected = true<\/script><img src=x/,
      );
      assert.equal(
        await fleet.evaluate(() => (window as { __lifeguardInjected?: boolean }).__lifeguardInjected),
        undefined,
      );
      assert.equal(
        await fleet.locator('main script, main img').count(),
        0,
        'no element made from the reason',
      );
      await fleet.close();
    } finally {
      await compute.updateService(service!.id, { status: 'enabled' });
    }
  });

  it('shows a port with the blocks left on it and the entity holding each, the agents alive, and the port turning ACTIVE as blocks go', async () => {
    const connection = await connect(vhost.url);
    const channel = await connection.createConfirmChannel();
    const send = async (exchange: string, key: string, body: Record<string, unknown>) => {
      channel.publish(exchange, key, Buffer.from(JSON.stringify(body)), {
        contentType: 'application/json',
        persistent: true,
      });
      await channel.waitForConfirms();
    };
    const command = (body: Record<string, unknown>) =>
      send(PROVISIONING_COMMANDS_EXCHANGE, String(body.command), body);
    const agent = (body: Record<string, unknown>) => send(NATIVE_AGENTS_EXCHANGE, String(body.type), body);
    const portId = '00000001-0000-4000-8000-000000000001';
    try {
      await agent({
        type: 'report_state',
        agent_type: 'DHCP agent',
        binary: 'neutron-dhcp-agent',
        host: 'net-1',
        topic: 'dhcp_agent',
      });
      await agent({
        type: 'report_state',
        agent_type: 'Open vSwitch agent',
        binary: 'neutron-openvswitch-agent',
        host: 'compute-01',
        start_flag: true,
      });
      await command({ command: 'network.create', network: { id: 'net-demo', name: 'demo' } });
      await command({
        command: 'subnet.create',
        subnet: { id: 'sub-demo', network_id: 'net-demo', cidr: '10.9.0.0/24' },
      });
      await command({ command: 'network.dhcp_agent.add', network_id: 'net-demo', host: 'net-1' });
      await command({
        command: 'port.create',
        port: {
          id: portId,
          network_id: 'net-demo',
          mac_address: 'fa:16:3e:00:00:01',
          device_owner: 'compute:nova',
          device_id: 'aaaaaaaa-0000-4000-8000-000000000001',
          fixed_ips: [{ subnet_id: 'sub-demo', ip_address: '10.9.0.10' }],
          'binding:host_id': 'compute-01',
          'binding:vif_type': 'ovs',
        },
      });
      const page = await open('/provisioning');
      const row = page.locator('table#blocked-ports tr', { hasText: portId });
      await row.filter({ hasText: 'DHCP, L2' }).waitFor({ timeout: 30_000 });
      assert.match(
        (await page.locator('#agents').textContent()) ?? '',
        /compute-01.*Open vSwitch agent.*alive/s,
      );
      assert.match((await page.locator('#outbox').textContent()) ?? '', /event\(s\) not yet published/);
      await agent({ type: 'dhcp.ready', port_ids: [portId] });
      await row.filter({ hasText: 'L2' }).filter({ hasNotText: 'DHCP' }).waitFor({ timeout: 30_000 });
      await screenshot(page, 'provisioning');
      await agent({ type: 'device.up', device: `tap${portId.slice(0, 11)}`, host: 'compute-01' });
      await row.waitFor({ state: 'detached', timeout: 30_000 });
      await page.locator('#port-statuses', { hasText: 'ACTIVE' }).waitFor({ timeout: 30_000 });
      await page.close();
    } finally {
      await connection.close();
    }
  });
});
