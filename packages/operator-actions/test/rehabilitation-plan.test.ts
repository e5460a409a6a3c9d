import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Incident } from '@lifeguard/instance-ha';
import type { ComputeService, Migration } from '@lifeguard/openstack';
import { planRehabilitation, type RehabilitationInput } from '../src/index.ts';

const now = new Date('2026-11-30T09:00:00Z');

const service = (fields: Partial<ComputeService>): ComputeService => ({
  id: 'service-2',
  binary: 'nova-compute',
  host: 'compute2',
  zone: 'nova',
  status: 'disabled',
  state: 'down',
  updated_at: '2026-11-30T08:59:55.000000',
  disabled_reason:
    'lifeguard evacuation complete: 2026-11-30T08:40:00.000Z incident=compute2.20261130T083000Z.ab12',
  forced_down: true,
  ...fields,
});

const migration = (status: string, source = 'compute2'): Migration => ({
  id: Math.floor(Math.random() * 1e6),
  instance_uuid: `server-${status}`,
  source_compute: source,
  status,
  migration_type: 'evacuation',
  created_at: '2026-11-30T08:41:00.000000',
});

const incident = (state: Incident['state']): Incident =>
  ({
    id: 'compute2.20261130T083000Z.ab12',
    host: 'compute2',
    serviceId: 'service-2',
    state,
    fence: {
      proof: 'power-off-confirmed',
      method: 'redfish',
      at: '2026-11-30T08:31:00Z',
      by: null,
      note: null,
    },
  }) as Incident;

const plan = (fields: Partial<RehabilitationInput>) =>
  planRehabilitation({
    host: 'compute2',
    service: service({}),
    incident: incident('evacuated'),
    migrations: [migration('completed'), migration('error')],
    serviceDownTimeSeconds: 60,
    now,
    ...fields,
  });

describe('planRehabilitation', () => {
  it('plans the full sequence for an evacuated, forced-down, disabled host whose compute reports again', () => {
    const verdict = plan({});
    assert.equal(verdict.kind, 'plan');
    assert.deepEqual(verdict.kind === 'plan' && verdict.steps, [
      'unset-forced-down',
      'wait-until-up',
      'enable',
      'close-incident',
      'publish-reenabled',
    ]);
  });

  it('refuses while an evacuation from the host is still accepted or pre-migrating', () => {
    const verdict = plan({
      migrations: [migration('accepted'), migration('pre-migrating'), migration('done', 'compute9')],
    });
    assert.equal(verdict.kind, 'refuse');
    assert.match(
      verdict.kind === 'refuse' ? verdict.reasons.join('\n') : '',
      /2 evacuation\(s\) from compute2 still in progress: server-accepted \(accepted\), server-pre-migrating \(pre-migrating\)/,
    );
  });

  it('refuses a forced-down host whose nova-compute has been silent longer than service_down_time', () => {
    const verdict = plan({ service: service({ updated_at: '2026-11-30T08:57:00.000000' }) });
    assert.equal(verdict.kind, 'refuse');
    assert.match(
      verdict.kind === 'refuse' ? verdict.reasons[0]! : '',
      /nova-compute on compute2 is not reporting \(state down, last report 180 s ago; forced down, so its heartbeats are read/,
    );
  });

  it('refuses a host that is not forced down but reports down', () => {
    const verdict = plan({ service: service({ forced_down: false, state: 'down' }) });
    assert.equal(verdict.kind, 'refuse');
  });

  it('refuses a reserved host, and one an operator disabled or forced down without an incident', () => {
    const reserved = plan({
      incident: null,
      service: service({ disabled_reason: 'lifeguard-reserved: x', forced_down: false, state: 'up' }),
    });
    assert.match(reserved.kind === 'refuse' ? reserved.reasons[0]! : '', /is a reserved host/);
    const forced = plan({ incident: null, service: service({ status: 'enabled', disabled_reason: null }) });
    assert.match(
      forced.kind === 'refuse' ? forced.reasons[0]! : '',
      /is forced down \(no reason given\), not by an evacuation/,
    );
    assert.match(
      forced.kind === 'refuse' ? forced.hints[0]! : '',
      /openstack compute service set --up compute2 nova-compute/,
    );
  });

  it("takes InstanceHA's FAILED marker as lifeguard's to undo once nothing is in flight", () => {
    const verdict = plan({
      incident: null,
      service: service({ disabled_reason: 'instanceha evacuation FAILED: 2026-11-30 08:40:00' }),
    });
    assert.deepEqual(verdict.kind === 'plan' && verdict.steps, [
      'unset-forced-down',
      'wait-until-up',
      'enable',
      'publish-reenabled',
    ]);
  });

  it('for an enabled host with a finished incident only closes the incident; with none there is nothing to do', () => {
    const enabled = service({ status: 'enabled', forced_down: false, state: 'up', disabled_reason: null });
    const closing = plan({ service: enabled, incident: incident('failed') });
    assert.deepEqual(closing.kind === 'plan' && closing.steps, ['close-incident']);
    assert.equal(plan({ service: enabled, incident: null }).kind, 'nothing-to-do');
  });
});
