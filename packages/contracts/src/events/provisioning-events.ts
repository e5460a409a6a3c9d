import { parseWith } from '../parse.ts';
import { EVENT_SCHEMA_VERSION, type EventData, type EventOf, type EventSource } from './events.ts';
import {
  PortStatusChangedEvent,
  PortVifPluggedEvent,
  ProvisioningCompleteEvent,
} from './provisioning-event-schemas.ts';

/**
 * What every event carries besides its type and data, fixed by whoever committed the state change
 * the event reports: the event id (a UUID, chosen before the commit so a replay publishes the same
 * id), `occurredAt` (ISO 8601) and the source that decided it.
 */
export interface EventEnvelope {
  readonly id: string;
  readonly occurredAt: string;
  readonly source: EventSource;
}

function envelopeOf(envelope: EventEnvelope) {
  return {
    id: envelope.id,
    schemaVersion: EVENT_SCHEMA_VERSION,
    occurredAt: envelope.occurredAt,
    source: { service: envelope.source.service, instance: envelope.source.instance },
  };
}

/**
 * The `provisioning.complete` event (schema ProvisioningCompleteEvent). A `requestId` that is null,
 * undefined or '' is left out.
 * @throws ContractViolationError naming the failing fields
 */
export function provisioningCompleteEvent(
  envelope: EventEnvelope,
  data: EventData<'provisioning.complete'>,
): EventOf<'provisioning.complete'> {
  const { requestId, ...required } = data;
  return parseWith(
    ProvisioningCompleteEvent,
    {
      ...envelopeOf(envelope),
      type: 'provisioning.complete',
      data: { ...required, ...(requestId ? { requestId } : {}) },
    },
    'provisioning.complete event',
  );
}

/**
 * The `port.status.changed` event (schema PortStatusChangedEvent).
 * @throws ContractViolationError naming the failing fields
 */
export function portStatusChangedEvent(
  envelope: EventEnvelope,
  data: EventData<'port.status.changed'>,
): EventOf<'port.status.changed'> {
  return parseWith(
    PortStatusChangedEvent,
    { ...envelopeOf(envelope), type: 'port.status.changed', data },
    'port.status.changed event',
  );
}

/**
 * The `port.vif.plugged` event (schema PortVifPluggedEvent).
 * @throws ContractViolationError naming the failing fields
 */
export function portVifPluggedEvent(
  envelope: EventEnvelope,
  data: EventData<'port.vif.plugged'>,
): EventOf<'port.vif.plugged'> {
  return parseWith(
    PortVifPluggedEvent,
    { ...envelopeOf(envelope), type: 'port.vif.plugged', data },
    'port.vif.plugged event',
  );
}
