// SKIP_SERVERS_IN_PROJECT's project names, looked up in (simulated) Keystone by ExcludedProjects:
// what is looked up and what is not, the answer kept for its age (on an injected clock), and Keystone
// unreachable (the last answer is used and a warning names the project). The same Keystone call is
// proved against the real Keystone by packages/openstack/test/keystone-contract.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { ExcludedProjects } from '@lifeguard/instance-ha';
import { CloudEntry, createOpenStackClients } from '@lifeguard/openstack';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';

/** An item shaped as Keystone's project ids are: matched as an id, never looked up. */
const KEYSTONE_ID = 'aa11bb22cc33dd44ee55ff6677889900';

/** ExcludedProjects for `items` on the sim's Keystone (no retries: an unreachable Keystone fails at once). */
function excludedProjects(sim: CloudSim, items: string[], clock: { now: number }) {
  const entry = CloudEntry.parse(sim.cloudEntry('admin_token'));
  const { identity } = createOpenStackClients({
    env: {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: String(entry.auth.token),
      OS_ENDPOINT: String(entry.auth.endpoint),
      OS_IDENTITY_ENDPOINT_OVERRIDE: sim.urls.identity,
    },
    searchDirectories: [],
    retry: { attempts: 1 },
  });
  const lines = new CapturedLines();
  const logger = createLogger({ service: 'test', level: 'info', destination: lines });
  return { projects: new ExcludedProjects(identity, items, logger, 30_000, () => clock.now), lines };
}

const lookups = (sim: CloudSim) =>
  sim.requests
    .matching((request) => request.url.startsWith('/identity/v3/projects'))
    .map((request) => new URL(request.url, 'http://sim').searchParams.get('name'));

describe('SKIP_SERVERS_IN_PROJECT names looked up in Keystone (ExcludedProjects)', () => {
  it('maps the ids of the named projects to their names and looks up no item shaped as a Keystone id', async () => {
    const sim = await startCloudSim({ hosts: 1 });
    try {
      const octavia = sim.identity.addProject('octavia');
      const clock = { now: 0 };
      const { projects, lines } = excludedProjects(sim, ['octavia', KEYSTONE_ID, 'no-such-project'], clock);
      assert.deepEqual([...(await projects.get())], [[octavia.id, 'octavia']]);
      assert.deepEqual(lookups(sim), ['octavia', 'no-such-project']);
      const unknown = lines.records().find((record) => record.project === 'no-such-project');
      assert.equal(unknown?.msg, 'SKIP_SERVERS_IN_PROJECT: Keystone knows no project with this name');
    } finally {
      await sim.close();
    }
  });

  it('asks again only once its answer is older than its age', async () => {
    const sim = await startCloudSim({ hosts: 1 });
    try {
      sim.identity.addProject('octavia');
      const clock = { now: 0 };
      const { projects } = excludedProjects(sim, ['octavia'], clock);
      await projects.get();
      clock.now = 29_999;
      await projects.get();
      assert.equal(lookups(sim).length, 1);
      clock.now = 30_000;
      await projects.get();
      assert.equal(lookups(sim).length, 2);
    } finally {
      await sim.close();
    }
  });

  it('uses the last answer when Keystone cannot be reached, and a name never resolved excludes nothing', async () => {
    const sim = await startCloudSim({ hosts: 1 });
    const octavia = sim.identity.addProject('octavia');
    const clock = { now: 0 };
    const { projects, lines } = excludedProjects(sim, ['octavia'], clock);
    const { projects: never } = excludedProjects(sim, ['trove'], clock);
    await projects.get();
    await sim.close();
    clock.now = 60_000;
    assert.deepEqual([...(await projects.get())], [[octavia.id, 'octavia']]);
    const warning = lines.records().find((record) => record.level === 40);
    assert.equal(warning?.project, 'octavia');
    assert.deepEqual(warning?.lastKnownIds, [octavia.id]);
    assert.match(String(warning?.msg), /could not resolve this project name; its last known ids are used/);
    assert.deepEqual([...(await never.get())], []);
  });
});
