import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '@lifeguard/runtime';
import {
  evacuationPolicy,
  type InstanceEvacuationContext,
  InstanceEvacuator,
  NO_PROGRESS,
} from '../src/index.ts';
import { bedsClosedAfterTests } from './support/evacuation-bed.ts';

// The unlock after an evacuation decides on the instance's last look when that look was read after
// the lock and nothing was sent since; a look read before the lock does not show the lock, so the
// server is read again then.

const bed = bedsClosedAfterTests();
const logger = createLogger({ service: 'unlock-last-look-test', level: 'silent' });

async function setUp(host: string) {
  const test = await bed({
    inProcessWorker: false,
    instanceHa: { SMART_EVACUATION: 'true' },
    cloud: { model: { evacuation: { acceptMilliseconds: 0, rebuildMilliseconds: 100 } } },
  });
  const server = test.sim.addServer({ host, name: 'web' });
  const { incident } = await test.failHost('compute1', { addJob: false });
  const evacuator = new InstanceEvacuator(
    test.nova,
    {
      policy: evacuationPolicy(test.config),
      firstCheckMilliseconds: 50,
      pollMilliseconds: 50,
      migrationWindowMinutes: 60,
    },
    logger,
  );
  const target = {
    instanceId: server.id,
    instanceName: server.name,
    failedHost: 'compute1',
    originalStatus: 'ACTIVE',
    targetHost: null,
    fencedAt: new Date(incident.fence!.at),
  };
  const context: InstanceEvacuationContext = {
    progress: NO_PROGRESS,
    saveProgress: async () => undefined,
    shouldStop: async () => false,
    recheckHost: async () => ({ kind: 'go' }),
  };
  const path = `/compute/v2.1/servers/${server.id}`;
  const calls = (match: (request: { method: string; url: string; body: unknown }) => boolean) =>
    test.sim.requests.matching((request) => request.url.startsWith(path) && match(request)).length;
  const reads = () => calls((request) => request.method === 'GET' && request.url === path);
  // Every look after the first reads this incident's evacuation migrations of the server, then the server.
  const migrationReads = () =>
    test.sim.requests.matching((request) =>
      request.url.startsWith(`/compute/v2.1/os-migrations?instance_uuid=${server.id}`),
    ).length;
  const unlocks = () =>
    calls((request) => typeof request.body === 'object' && request.body !== null && 'unlock' in request.body);
  return { test, server, evacuator, target, context, reads, migrationReads, unlocks };
}

describe('the unlock after an evacuation', () => {
  it('uses the look that saw the instance landed: no read of the server just for the unlock, and it ends unlocked', async () => {
    const { test, server, evacuator, target, context, reads, migrationReads, unlocks } =
      await setUp('compute1');
    const result = await evacuator.evacuate(target, context);
    assert.equal(result.outcome, 'evacuated');
    // The first look reads the server alone (idle on the failed host); every later look both.
    assert.equal(reads(), migrationReads() + 1, 'the looks read the server; the unlock did not');
    assert.equal(unlocks(), 1);
    assert.equal(test.sim.model.servers.get(server.id)!.locked, false);
  });

  it('reads the server again when the only look came before the lock (already evacuated), and unlocks it', async () => {
    // Already on another host, idle: the first look (read before the lock) ends the instance at once.
    const { test, server, evacuator, target, context, reads, migrationReads, unlocks } =
      await setUp('compute2');
    const result = await evacuator.evacuate(target, context);
    assert.equal(result.outcome, 'already-evacuated');
    assert.equal(test.sim.evacuateCalls(server.id), 0);
    // The first look reads the server, then (not idle on the failed host) the migrations and the server.
    assert.equal(reads(), migrationReads() + 2, 'one read more: the unlock read the server itself');
    assert.equal(unlocks(), 1);
    assert.equal(test.sim.model.servers.get(server.id)!.locked, false);
  });
});
