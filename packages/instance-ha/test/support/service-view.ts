import assert from 'node:assert/strict';
import { type Categorisation, categoriseServices, type ServiceView, toServiceView } from '../../src/index.ts';

let serial = 0;

/**
 * A nova-compute service as the node monitor sees it at `now`: GET /os-services' record (enabled, up,
 * not forced down, last reported 1 s before `now` unless `fields` say otherwise), made a ServiceView.
 * @throws AssertionError when the record would be skipped (missing fields)
 */
export function serviceView(host: string, now: Date, fields: Record<string, unknown> = {}): ServiceView {
  serial++;
  const view = toServiceView(
    {
      id: `svc-${serial}`,
      binary: 'nova-compute',
      host,
      status: 'enabled',
      state: 'up',
      forced_down: false,
      updated_at: novaTime(new Date(now.getTime() - 1000)),
      disabled_reason: null,
      zone: 'nova',
      ...fields,
    },
    now,
  );
  assert.ok('shortHost' in view, `${host}'s record is not skipped`);
  return view;
}

/** A time as Nova writes `updated_at`: ISO 8601 without a zone (UTC). */
export const novaTime = (time: Date): string => time.toISOString().replace('Z', '');

/** The services as GET /os-services returns them, categorised at `now` with no open incident. */
export function categorisedAt(
  services: ReadonlyArray<ServiceView>,
  now: Date,
  deltaSeconds: number,
): Categorisation {
  return categoriseServices(
    services.map((service) => ({
      id: service.id,
      binary: 'nova-compute',
      host: service.host,
      zone: service.zone,
      status: service.status,
      state: service.state,
      forced_down: service.forcedDown,
      updated_at: service.updatedAt,
      disabled_reason: service.disabledReason,
    })),
    { now, deltaSeconds, openIncidents: new Map() },
  );
}
