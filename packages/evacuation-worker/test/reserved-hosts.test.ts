import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadInstanceHaConfig } from '@lifeguard/instance-ha';
import { Aggregate, ComputeService } from '@lifeguard/openstack';
import { deleteKeysWithPrefix, randomKeyPrefix, testRedis } from '@lifeguard/testing';
import type { Redis } from 'ioredis';
import {
  loadEvacuationWorkerSettings,
  matchingReservedHosts,
  ReservedHostClaims,
  reservedHostPool,
} from '../src/index.ts';

const service = (host: string, extra: Record<string, unknown> = {}) =>
  ComputeService.parse({
    id: `id-${host}`,
    binary: 'nova-compute',
    host,
    status: 'enabled',
    state: 'up',
    forced_down: false,
    zone: 'az1',
    ...extra,
  });
const spare = (host: string, zone: string, reason = 'reserved for HA') =>
  service(host, { status: 'disabled', disabled_reason: reason, zone });

describe('reserved-host pool and matching (docs/instance-ha-rules.md#reserved-hosts)', () => {
  it('pools disabled services whose reason contains "reserved" (case-sensitive), up and not forced down', () => {
    const pool = reservedHostPool(
      [
        spare('s1', 'az1'),
        spare('s2', 'az1', 'lifeguard-reserved: 2026-11-30T08:00:00.000Z'),
        spare('s3', 'az1', 'RESERVED'),
        service('s4', { status: 'disabled', disabled_reason: 'reserved', state: 'down' }),
        service('c1'),
      ],
      'c1',
    );
    assert.deepEqual(
      pool.map((each) => each.host),
      ['s1', 's2'],
    );
  });

  it('matches by availability zone when TAGGED_AGGREGATES is off', () => {
    const pool = [spare('s-az2', 'az2'), spare('s-az1', 'az1')];
    const matches = matchingReservedHosts(service('c1', { zone: 'az1' }), pool, {
      taggedAggregates: false,
      tag: 'evacuable',
      aggregates: [],
    });
    assert.deepEqual(
      matches.map((each) => each.host),
      ['s-az1'],
    );
  });

  it('matches by a shared aggregate when TAGGED_AGGREGATES is on, and needs the spare in an evacuable aggregate', () => {
    const aggregates = [
      Aggregate.parse({ id: 1, name: 'rack-a', hosts: ['c1', 's-shared-untagged', 's-shared'] }),
      Aggregate.parse({ id: 2, name: 'ha', hosts: ['s-shared', 's-other'], metadata: { evacuable: 'true' } }),
    ];
    const pool = [spare('s-other', 'az1'), spare('s-shared-untagged', 'az1'), spare('s-shared', 'az1')];
    const matches = matchingReservedHosts(service('c1'), pool, {
      taggedAggregates: true,
      tag: 'evacuable',
      aggregates,
    });
    assert.deepEqual(
      matches.map((each) => each.host),
      ['s-shared'],
    );
  });
});

describe('reserved-host claims in Redis', () => {
  let redis: Redis;
  const prefix = randomKeyPrefix('claims');
  before(() => {
    redis = testRedis();
  });
  after(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it('hands one spare to exactly one of many concurrent incidents', async () => {
    const claims = new ReservedHostClaims(redis, prefix);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => claims.claim('spare-1', `incident-${index}`)),
    );
    assert.equal(results.filter((result) => result.kind === 'claimed').length, 1);
    assert.equal(results.filter((result) => result.kind === 'taken').length, 19);
  });

  it('gives an incident back the spare it already holds, and frees it on release', async () => {
    const claims = new ReservedHostClaims(redis, prefix);
    assert.deepEqual(await claims.claim('spare-2', 'incident-a'), { kind: 'claimed', host: 'spare-2' });
    assert.deepEqual(await claims.claim('spare-3', 'incident-a'), { kind: 'already-held', host: 'spare-2' });
    assert.deepEqual(await claims.claim('spare-2', 'incident-b'), { kind: 'taken', by: 'incident-a' });
    await claims.release('spare-2', 'incident-b');
    assert.equal(await claims.heldBy('incident-a'), 'spare-2');
    await claims.release('spare-2', 'incident-a');
    assert.equal(await claims.heldBy('incident-a'), null);
    assert.deepEqual(await claims.claim('spare-2', 'incident-b'), { kind: 'claimed', host: 'spare-2' });
  });
});

describe('concurrency mapping', () => {
  it('maps WORKERS onto host and re-enable concurrency and EVACUATION_MAX_THREADS onto instance concurrency', () => {
    const { config } = loadInstanceHaConfig({
      path: '/nonexistent/config.yaml',
      env: { WORKERS: '3', EVACUATION_MAX_THREADS: '24', SMART_EVACUATION: 'true' },
    });
    const settings = loadEvacuationWorkerSettings(config, [{ name: 'environment', values: {} }]);
    assert.equal(settings.hostConcurrency, 3);
    assert.equal(settings.recoveryConcurrency, 3);
    assert.equal(settings.instanceConcurrency, 24);
    assert.equal(settings.perHostConcurrency, 8);
    assert.equal(settings.mode, 'smart');
    assert.deepEqual(settings.roles, ['hosts', 'instances', 'recovery']);
    assert.equal(settings.firstCheckMilliseconds, 10_000);
    assert.equal(settings.pollMilliseconds, 5_000);
    assert.equal(settings.recheckMilliseconds, 45_000);
  });

  it('stops start-up naming an unknown role', () => {
    const { config } = loadInstanceHaConfig({ path: '/nonexistent/config.yaml', env: {} });
    assert.throws(
      () =>
        loadEvacuationWorkerSettings(config, [
          { name: 'environment', values: { LIFEGUARD_EVACUATION_ROLES: 'hosts,children' } },
        ]),
      /LIFEGUARD_EVACUATION_ROLES \(environment\): unknown role "children"/,
    );
  });
});
