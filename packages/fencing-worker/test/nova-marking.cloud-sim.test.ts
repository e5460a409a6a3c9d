import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CloudSim, startCloudSim } from '@lifeguard/cloud-sim';
import { formatDisabledReason, parseDisabledReason } from '@lifeguard/instance-ha';
import { type ComputeApi, createOpenStackClients } from '@lifeguard/openstack';
import { createLogger } from '@lifeguard/runtime';
import { markServiceFenced } from '../src/index.ts';

const logger = createLogger({ service: 'fencing-worker-test', level: 'silent' });

describe('markServiceFenced: forced_down, then the evacuation marker (docs/instance-ha-rules.md#nova-marking)', () => {
  let sim: CloudSim;
  let compute: ComputeApi;

  before(async () => {
    sim = await startCloudSim({ hosts: 4, servers: 0, redfishPort: false });
    compute = createOpenStackClients({
      env: { OS_AUTH_TYPE: 'admin_token', OS_TOKEN: 'admin:admin', OS_ENDPOINT: sim.urls.compute },
      searchDirectories: [],
      logger,
    }).compute;
  });

  after(async () => {
    await sim?.close();
  });

  const serviceOf = async (host: string) => {
    const [service] = await compute.listServices({ binary: 'nova-compute', host });
    assert.ok(service, `${host} has a nova-compute service`);
    return service;
  };

  it('forces the service down, then disables it with the incident marker', async () => {
    const service = await serviceOf('compute1');
    const outcome = await markServiceFenced(compute, logger, {
      host: 'compute1',
      serviceId: service.id,
      incidentId: 'incident-one',
      kdumpFenced: false,
    });
    const now = await serviceOf('compute1');
    assert.deepEqual(
      [now.forced_down, now.status, now.disabled_reason],
      [true, 'disabled', outcome.disabledReason],
    );
    assert.equal(outcome.disabled, true);
    const marker = parseDisabledReason(now.disabled_reason);
    assert.deepEqual(
      [marker.kind, marker.origin, marker.incidentId],
      ['evacuating', 'lifeguard', 'incident-one'],
    );
  });

  it('run again for the same incident (a redelivered job), keeps the first marker and its timestamp', async () => {
    const service = await serviceOf('compute2');
    const target = { host: 'compute2', serviceId: service.id, incidentId: 'incident-two', kdumpFenced: true };
    const first = await markServiceFenced(compute, logger, target);
    const again = await markServiceFenced(compute, logger, target);
    assert.deepEqual(again, { disabledReason: first.disabledReason, disabled: false });
    const now = await serviceOf('compute2');
    assert.deepEqual([now.forced_down, now.disabled_reason], [true, first.disabledReason]);
    assert.equal(parseDisabledReason(now.disabled_reason).kdump, true);
  });

  /** Disables `host`'s service with `reason`, then marks it fenced for `incidentId`. */
  const markDisabled = async (host: string, reason: string, incidentId: string) => {
    const service = await serviceOf(host);
    await compute.updateService(service.id, { status: 'disabled', disabled_reason: reason });
    return markServiceFenced(compute, logger, {
      host,
      serviceId: service.id,
      incidentId,
      kdumpFenced: false,
    });
  };

  it("keeps InstanceHA's own marker, and replaces an older incident's", async () => {
    const theirs = 'instanceha evacuation: 2026-11-30T10:00:00.000000';
    assert.deepEqual(await markDisabled('compute3', theirs, 'incident-three'), {
      disabledReason: theirs,
      disabled: false,
    });
    assert.equal((await serviceOf('compute3')).forced_down, true);

    const stale = formatDisabledReason({ kind: 'evacuating', incidentId: 'incident-old', at: new Date(0) });
    const replaced = await markDisabled('compute4', stale, 'incident-new');
    assert.equal(replaced.disabled, true);
    assert.equal(
      parseDisabledReason((await serviceOf('compute4')).disabled_reason).incidentId,
      'incident-new',
    );
  });

  it('fails with Nova’s 404 for a service that is gone, writing nothing', async () => {
    await assert.rejects(
      markServiceFenced(compute, logger, {
        host: 'compute9',
        serviceId: '00000000-0000-4000-8000-000000000000',
        incidentId: 'incident-four',
        kdumpFenced: false,
      }),
      (error: Error & { status?: number }) => error.name === 'NovaApiError' && error.status === 404,
    );
  });
});
