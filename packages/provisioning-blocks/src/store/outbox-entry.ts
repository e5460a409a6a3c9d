import {
  type EventEnvelope,
  type EventOf,
  LifeguardEvent,
  portStatusChangedEvent,
  portVifPluggedEvent,
  provisioningCompleteEvent,
} from '@lifeguard/contracts';
import { z } from 'zod';

/*
 * An outbox entry is a Redis stream entry holding the facts of one event, written in the same Lua
 * script as the state change it reports (so the two commit together), and turned into the event
 * here, once, by the contracts' builders. Every entry has the string fields:
 *   id          the event id (UUID), fixed before the commit: every relay of the entry publishes it
 *   type        the event type
 *   occurredAt  ISO 8601
 *   service, instance   the event's source
 * and per type:
 *   provisioning.complete  objectType, objectId, entity, requestId ('' = none)
 *   port.status.changed    port:id, port:device_id, port:device_owner, port:binding:host_id and
 *                          port:status (the status before the change), each the port record's
 *                          attribute as stored (JSON); status (the new status); notifyNova
 *                          ('1', '0', or '' when not given)
 *   port.vif.plugged       port:id, port:device_id, port:device_owner, port:binding:host_id (JSON
 *                          as stored); host (the reporting agent's host)
 * Entries written before this layout carry the event's JSON in a field `event` instead; they are
 * validated against the event schemas and published as they are.
 */

/** An outbox entry's fields that give no event; the message names the field. */
class UnpublishableEntryError extends Error {}

/** A port record attribute as stored (JSON), decoded; a missing or null one gives `fallback`. */
function storedAttribute(values: Record<string, string>, field: string, fallback: string): unknown {
  const text = values[field];
  if (text === undefined) throw new UnpublishableEntryError(`${field}: missing`);
  try {
    return (JSON.parse(text) as unknown) ?? fallback;
  } catch {
    throw new UnpublishableEntryError(`${field}: not JSON: ${text.slice(0, 80)}`);
  }
}

const OUTBOX_EVENT_TYPES = new Set(['provisioning.complete', 'port.status.changed', 'port.vif.plugged']);

function field(values: Record<string, string>, name: string): string {
  const value = values[name];
  if (value === undefined) throw new UnpublishableEntryError(`${name}: missing`);
  return value;
}

/** The events the provisioning service publishes through its outbox. */
export type OutboxEvent = EventOf<'provisioning.complete' | 'port.status.changed' | 'port.vif.plugged'>;

/** What reading an outbox entry gave: its event, or why it cannot be published. */
export type OutboxReading = { readonly event: LifeguardEvent } | { readonly unpublishable: string };

/**
 * The event the fields of an entry give, built and validated by its contracts builder (the zod
 * schema of the event is the check on what the scripts wrote).
 * @throws UnpublishableEntryError for a missing field or an unknown type
 * @throws ContractViolationError when the event fails its schema
 */
function eventOf(values: Record<string, string>): OutboxEvent {
  const type = field(values, 'type');
  if (!OUTBOX_EVENT_TYPES.has(type))
    throw new UnpublishableEntryError(`type: not an event of the outbox: ${type}`);
  const envelope: EventEnvelope = {
    id: field(values, 'id'),
    occurredAt: field(values, 'occurredAt'),
    source: { service: field(values, 'service'), instance: field(values, 'instance') },
  };
  switch (type) {
    case 'provisioning.complete':
      return provisioningCompleteEvent(envelope, {
        objectType: field(values, 'objectType'),
        objectId: field(values, 'objectId'),
        entity: field(values, 'entity'),
        requestId: values.requestId ?? '',
      });
    case 'port.status.changed': {
      const notifyNova = values.notifyNova ?? '';
      return portStatusChangedEvent(envelope, {
        portId: storedAttribute(values, 'port:id', '') as string,
        previousStatus: storedAttribute(values, 'port:status', 'DOWN') as string,
        status: field(values, 'status'),
        deviceId: storedAttribute(values, 'port:device_id', '') as string,
        deviceOwner: storedAttribute(values, 'port:device_owner', '') as string,
        host: storedAttribute(values, 'port:binding:host_id', '') as string,
        ...(notifyNova === '' ? {} : { notifyNova: notifyNova === '1' }),
      });
    }
    case 'port.vif.plugged':
      return portVifPluggedEvent(envelope, {
        portId: storedAttribute(values, 'port:id', '') as string,
        deviceId: storedAttribute(values, 'port:device_id', '') as string,
        deviceOwner: storedAttribute(values, 'port:device_owner', '') as string,
        host: field(values, 'host'),
        boundHost: storedAttribute(values, 'port:binding:host_id', '') as string,
      });
    default:
      throw new UnpublishableEntryError(`type: not an event of the outbox: ${type}`);
  }
}

function messageOf(error: unknown): string {
  if (error instanceof z.ZodError) {
    return error.issues.map((issue) => `${issue.path.join('.') || '(entry)'}: ${issue.message}`).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Builds and validates the event of an outbox entry from its stream fields (alternating names and
 * values, as XREADGROUP returns them). Never throws: an entry that does not give a valid event
 * comes back with the reason, for the relay to set it aside.
 */
export function readOutboxEntry(fields: ReadonlyArray<string>): OutboxReading {
  const values: Record<string, string> = {};
  for (let index = 0; index + 1 < fields.length; index += 2) values[fields[index]!] = fields[index + 1]!;
  try {
    if (values.event !== undefined) return { event: LifeguardEvent.parse(JSON.parse(values.event)) };
    return { event: eventOf(values) };
  } catch (error) {
    return { unpublishable: messageOf(error) };
  }
}

/** Missing attributes are stored as JSON null; the builders' schemas then reject them. */
const stored = (value: unknown) => JSON.stringify(value ?? null);

/**
 * The stream fields of an event built in TypeScript (the inverse of readOutboxEntry), for the
 * scripts that append an event whose facts they do not read themselves.
 */
export function outboxFieldsOf(event: OutboxEvent): string[] {
  const envelope = [
    'id',
    event.id,
    'type',
    event.type,
    'occurredAt',
    event.occurredAt,
    'service',
    event.source.service,
    'instance',
    event.source.instance,
  ];
  switch (event.type) {
    case 'provisioning.complete': {
      const { objectType, objectId, entity, requestId } = event.data;
      return [
        ...envelope,
        'objectType',
        objectType,
        'objectId',
        objectId,
        'entity',
        entity,
        'requestId',
        requestId ?? '',
      ];
    }
    case 'port.status.changed': {
      const { data } = event;
      return [
        ...envelope,
        ...storedPortFields(data.portId, data.deviceId, data.deviceOwner, data.host),
        'port:status',
        stored(data.previousStatus),
        'status',
        data.status,
        'notifyNova',
        data.notifyNova === undefined ? '' : data.notifyNova ? '1' : '0',
      ];
    }
    case 'port.vif.plugged': {
      const { data } = event;
      return [
        ...envelope,
        ...storedPortFields(data.portId, data.deviceId, data.deviceOwner, data.boundHost),
        'host',
        data.host,
      ];
    }
  }
}

/** The port's attributes as the scripts store them (`port:<attribute>` fields), in one order for every event. */
function storedPortFields(
  portId: unknown,
  deviceId: unknown,
  deviceOwner: unknown,
  boundHost: unknown,
): string[] {
  return [
    'port:id',
    stored(portId),
    'port:device_id',
    stored(deviceId),
    'port:device_owner',
    stored(deviceOwner),
    'port:binding:host_id',
    stored(boundHost),
  ];
}
