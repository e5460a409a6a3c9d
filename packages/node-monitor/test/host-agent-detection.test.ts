import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitionEventId } from '@lifeguard/contracts';
import type { HostAgentEvidence } from '@lifeguard/instance-ha';
import { createLogger } from '@lifeguard/runtime';
import { CapturedLines } from '@lifeguard/testing';
import { Registry } from 'prom-client';
import { serviceView } from '../../instance-ha/test/support/service-view.ts';
import { HostAgentDetection } from '../src/heartbeat/host-agent-detection.ts';

const start = new Date('2026-12-05T10:00:00Z');
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000);

/** compute-1's agent heard on the management network at `heardAt`, reporting nova-compute as `state`. */
const evidence = (heardAt: Date, state: 'running' | 'stopped'): HostAgentEvidence => ({
  networks: new Map([['management', new Map([['compute-1', heardAt]])]]),
  processes: new Map([['compute-1', { at: heardAt, processes: { 'nova-compute': state } }]]),
});

/**
 * compute-1's Nova record, changed by the service updates the detection makes. As in Nova, a call saves
 * the change first and then updates the host's traits through its nova-compute: `hold` keeps calls in
 * that second step, `saveThenFail` makes them fail there, as when nova-compute has just stopped and
 * the client gives up before Nova's RPC timeout.
 */
function setUp() {
  const nova: { status: string; disabled_reason: string | null } = {
    status: 'enabled',
    disabled_reason: null,
  };
  const updates: string[] = [];
  let saveThenFail = false;
  let held: Promise<void> | null = null;
  const compute = {
    updateService: async (
      _id: string,
      body: { status: 'enabled' | 'disabled'; disabled_reason?: string },
    ) => {
      updates.push(body.status);
      nova.status = body.status;
      nova.disabled_reason = body.disabled_reason ?? null;
      await held;
      if (saveThenFail) throw new Error('the operation was aborted due to timeout');
      return {} as never;
    },
  };
  const published: Array<{ type: string; id: string | undefined }> = [];
  let brokerAway = false;
  const events = {
    publish: async (type: string, _data: unknown, options?: { readonly id?: string }) => {
      if (brokerAway) throw new Error('the broker is away');
      published.push({ type, id: options?.id });
    },
  };
  const lines = new CapturedLines();
  const detection = new HostAgentDetection({
    config: { heartbeatDetection: true, heartbeatDownAfterSeconds: 3, novaReportIntervalSeconds: 10 },
    compute,
    events,
    logger: createLogger({ service: 'test', level: 'info', destination: lines }),
    registry: new Registry(),
  });
  /** One poll `seconds` after the start, the agent heard half a second before; the Nova call not awaited. */
  const respond = async (seconds: number, state: 'running' | 'stopped') =>
    (
      await detection.respond([serviceView('compute-1', at(seconds), nova)], {
        heartbeats: {
          last: new Map([['compute-1', at(seconds - 0.5)]]),
          listeningSince: start,
          hostAgents: evidence(at(seconds - 0.5), state),
        },
        now: at(seconds),
      })
    ).map((action) => action.action);
  /** The same, the Nova call awaited. */
  const poll = async (seconds: number, state: 'running' | 'stopped') => {
    const actions = await respond(seconds, state);
    await detection.settled();
    return actions;
  };
  return {
    nova,
    updates,
    published,
    lines,
    poll,
    respond,
    settled: () => detection.settled(),
    /** Holds every Nova call until the returned function is called. */
    hold: () => {
      let release = () => {};
      held = new Promise((resolve) => {
        release = resolve;
      });
      return () => {
        held = null;
        release();
      };
    },
    brokerAway: (value: boolean) => {
      brokerAway = value;
    },
    saveThenFail: (value: boolean) => {
      saveThenFail = value;
    },
  };
}

const disabledId = (reportedSeconds: number) =>
  transitionEventId('host.compute-service.disabled', 'compute-1', at(reportedSeconds).toISOString());
const enabledId = (reportedSeconds: number) =>
  transitionEventId('host.compute-service.enabled', 'compute-1', at(reportedSeconds).toISOString());

describe('HostAgentDetection.respond: a compute service changed in Nova is always announced, once', () => {
  it('an event that fails after Nova disabled or enabled the service is published at the next poll, under its transition id', async () => {
    const { nova, updates, published, lines, poll, brokerAway } = setUp();
    brokerAway(true);
    assert.deepEqual(await poll(5, 'stopped'), ['disable']);
    assert.equal(nova.status, 'disabled', 'Nova took the change');
    assert.deepEqual(published, [], 'the event could not go out');
    assert.ok(
      lines
        .records()
        .some(
          (line) =>
            String(line.msg) ===
            'host.compute-service.disabled for compute-1 not published; trying again at the next poll',
        ),
    );
    // The next poll: Nova's listing asks for nothing more, the event goes out now.
    brokerAway(false);
    assert.deepEqual(await poll(10, 'stopped'), []);
    assert.deepEqual(published, [{ type: 'host.compute-service.disabled', id: disabledId(4.5) }]);
    assert.deepEqual(await poll(15, 'stopped'), []);
    assert.equal(published.length, 1, 'published once');
    // The same for enabling once nova-compute runs again.
    brokerAway(true);
    assert.deepEqual(await poll(20, 'running'), ['enable']);
    assert.deepEqual([nova.status, nova.disabled_reason], ['enabled', null]);
    brokerAway(false);
    assert.deepEqual(await poll(25, 'running'), []);
    assert.deepEqual(await poll(30, 'running'), []);
    assert.deepEqual(published.slice(1), [{ type: 'host.compute-service.enabled', id: enabledId(19.5) }]);
    assert.deepEqual(updates, ['disabled', 'enabled'], 'Nova changed once each way');
  });

  it('a call that Nova saved but that failed (its trait update waited on the stopped nova-compute) is announced from the listing, not made again', async () => {
    const { nova, updates, published, lines, poll, saveThenFail } = setUp();
    saveThenFail(true);
    assert.deepEqual(await poll(5, 'stopped'), ['disable']);
    assert.ok(
      lines.records().some((line) => /^compute service of compute-1 not disabled/.test(String(line.msg))),
    );
    assert.deepEqual(published, []);
    assert.deepEqual(await poll(10, 'stopped'), [], 'the listing shows it disabled under the marker');
    assert.deepEqual(published, [{ type: 'host.compute-service.disabled', id: disabledId(4.5) }]);
    assert.deepEqual(await poll(20, 'running'), ['enable']);
    assert.equal(nova.status, 'enabled');
    assert.deepEqual(await poll(25, 'running'), []);
    assert.deepEqual(published.slice(1), [{ type: 'host.compute-service.enabled', id: enabledId(19.5) }]);
    assert.deepEqual(await poll(30, 'running'), []);
    assert.equal(published.length, 2, 'each announced once');
    assert.deepEqual(updates, ['disabled', 'enabled']);
  });

  it('one Nova call per host at a time, and the poll does not wait for it: a change Nova saved is announced while its call still waits', async () => {
    const { nova, updates, published, respond, settled, hold } = setUp();
    const release = hold();
    assert.deepEqual(await respond(5, 'stopped'), ['disable'], 'respond returned while the call waits');
    assert.equal(nova.status, 'disabled', 'Nova saved it');
    assert.deepEqual(published, []);
    assert.deepEqual(await respond(10, 'stopped'), [], 'no second call while the first waits');
    assert.deepEqual(
      published,
      [{ type: 'host.compute-service.disabled', id: disabledId(4.5) }],
      'announced from the listing',
    );
    release();
    await settled();
    assert.deepEqual(await respond(15, 'stopped'), []);
    assert.deepEqual(updates, ['disabled']);
    assert.equal(published.length, 1, 'the call ending announces nothing more');
  });
});
