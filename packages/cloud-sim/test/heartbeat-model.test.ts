import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CloudModel } from '../src/index.ts';

/** A model on a clock the test moves by hand: report every 2 s, down after 10 s. */
function modelOnClock() {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const model = new CloudModel({ reportIntervalSeconds: 2, serviceDownTimeSeconds: 10 }, () => now);
  model.addFlavor({ id: '1', name: 'm1.tiny' });
  for (const name of ['compute1', 'compute2', 'compute3']) model.addHost(name);
  return {
    model,
    advance: (seconds: number) => {
      now += seconds * 1000;
    },
    now: () => now,
  };
}

describe('cloud-sim heartbeats and host faults', () => {
  it('advances updated_at every report interval while nova-compute runs', () => {
    const { model, advance, now } = modelOnClock();
    const host = model.host('compute1');
    const start = now();
    advance(5);
    assert.equal(model.lastHeartbeat(host), start + 4000);
    advance(1);
    assert.equal(model.lastHeartbeat(host), start + 6000);
    assert.equal(model.serviceIsUp(host), true);
  });

  it('freezes updated_at when the host is killed and reports down after service_down_time', () => {
    const { model, advance, now } = modelOnClock();
    const host = model.host('compute1');
    advance(3);
    model.killHost('compute1');
    const frozen = model.lastHeartbeat(host);
    assert.equal(frozen, now() - 1000);
    advance(9);
    assert.equal(model.serviceIsUp(host), true, 'still up 10 s after the last report');
    advance(1);
    assert.equal(model.serviceIsUp(host), false);
    assert.equal(model.lastHeartbeat(host), frozen);
    assert.equal(host.poweredOn, true, 'killing nova-compute leaves the power on');
  });

  it('is down at once when forced down, whatever the heartbeats', () => {
    const { model } = modelOnClock();
    const host = model.host('compute2');
    host.forcedDown = true;
    assert.equal(model.serviceIsUp(host), false);
  });

  it('partitions several hosts at once and heals them without a restart', () => {
    const { model, advance } = modelOnClock();
    const server = model.addServer({ host: 'compute1' });
    const migration = model.migrations.create(server.id, 'compute1', null, 0);
    model.migrations.setStatus(migration, 'done', 0);
    model.setPartitioned(['compute1', 'compute2'], true);
    advance(12);
    assert.deepEqual(
      ['compute1', 'compute2', 'compute3'].map((name) => model.serviceIsUp(model.host(name))),
      [false, false, true],
    );
    model.setPartitioned(['compute1', 'compute2'], false);
    assert.equal(model.serviceIsUp(model.host('compute1')), true);
    assert.equal(migration.status, 'done', 'a healed partition is not a compute restart');
  });

  it('revives a killed host: it reports at once and its evacuations become completed', () => {
    const { model, advance, now } = modelOnClock();
    const server = model.addServer({ host: 'compute3' });
    const done = model.migrations.create(server.id, 'compute3', null, now());
    model.migrations.setStatus(done, 'done', now());
    const failed = model.migrations.create(server.id, 'compute3', null, now());
    model.migrations.setStatus(failed, 'failed', now());
    model.killHost('compute3');
    advance(30);
    assert.equal(model.serviceIsUp(model.host('compute3')), false);
    model.reviveHost('compute3');
    assert.equal(model.serviceIsUp(model.host('compute3')), true);
    assert.equal(model.lastHeartbeat(model.host('compute3')), now());
    assert.equal(done.status, 'completed');
    assert.equal(failed.status, 'failed');
  });

  it('stops heartbeats on power off and restarts nova-compute on power on', () => {
    const { model, advance } = modelOnClock();
    const host = model.host('compute2');
    model.powerOff('compute2');
    assert.equal(host.computeRunning, false);
    advance(11);
    assert.equal(model.serviceIsUp(host), false);
    model.powerOn('compute2');
    assert.equal(host.computeRunning, true);
    assert.equal(model.serviceIsUp(host), true);
  });

  it('keeps service updated_at at the later of the last report and the last API update', () => {
    const { model, advance, now } = modelOnClock();
    const host = model.host('compute1');
    advance(1);
    host.serviceUpdatedAt = now();
    assert.equal(model.serviceUpdatedAt(host), now());
    advance(2);
    assert.equal(model.serviceUpdatedAt(host), now() - 1000);
  });
});
