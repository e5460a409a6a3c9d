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

/** A port record attribute as stored: a JSON value, decoded. */
const storedJson = z.string().transform((text, context) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    context.addIssue({ code: 'custom', message: `not JSON: ${text.slice(0, 80)}` });
    return z.NEVER;
  }
});

const envelopeFields = {
  id: z.string(),
  occurredAt: z.string(),
  service: z.string(),
  instance: z.string(),
};

const storedPortFields = {
  'port:id': storedJson,
  'port:device_id': storedJson,
  'port:device_owner': storedJson,
  'port:binding:host_id': storedJson,
};

/** The stream fields of an outbox entry, by event type (see the layout above). */
const OutboxFacts = z.discriminatedUnion('type', [
  z.object({
    ...envelopeFields,
    type: z.literal('provisioning.complete'),
    objectType: z.string(),
    objectId: z.string(),
    entity: z.string(),
    requestId: z.string().default(''),
  }),
  z.object({
    ...envelopeFields,
    ...storedPortFields,
    type: z.literal('port.status.changed'),
    'port:status': storedJson,
    status: z.string(),
    notifyNova: z.enum(['1', '0', '']).default(''),
  }),
  z.object({
    ...envelopeFields,
    ...storedPortFields,
    type: z.literal('port.vif.plugged'),
    host: z.string(),
  }),
]);
type OutboxFacts = z.output<typeof OutboxFacts>;

/** The events the provisioning service publishes through its outbox. */
export type OutboxEvent = EventOf<'provisioning.complete' | 'port.status.changed' | 'port.vif.plugged'>;

/** What reading an outbox entry gave: its event, or why it cannot be published. */
export type OutboxReading = { readonly event: LifeguardEvent } | { readonly unpublishable: string };

function eventOf(facts: OutboxFacts): OutboxEvent {
  const envelope: EventEnvelope = {
    id: facts.id,
    occurredAt: facts.occurredAt,
    source: { service: facts.service, instance: facts.instance },
  };
  switch (facts.type) {
    case 'provisioning.complete':
      return provisioningCompleteEvent(envelope, {
        objectType: facts.objectType,
        objectId: facts.objectId,
        entity: facts.entity,
        requestId: facts.requestId,
      });
    case 'port.status.changed':
      return portStatusChangedEvent(envelope, {
        portId: facts['port:id'] as string,
        previousStatus: (facts['port:status'] ?? 'DOWN') as string,
        status: facts.status,
        deviceId: (facts['port:device_id'] ?? '') as string,
        deviceOwner: (facts['port:device_owner'] ?? '') as string,
        host: (facts['port:binding:host_id'] ?? '') as string,
        ...(facts.notifyNova === '' ? {} : { notifyNova: facts.notifyNova === '1' }),
      });
    case 'port.vif.plugged':
      return portVifPluggedEvent(envelope, {
        portId: facts['port:id'] as string,
        deviceId: (facts['port:device_id'] ?? '') as string,
        deviceOwner: (facts['port:device_owner'] ?? '') as string,
        host: facts.host,
        boundHost: (facts['port:binding:host_id'] ?? '') as string,
      });
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
    return { event: eventOf(OutboxFacts.parse(values)) };
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
        'port:id',
        stored(data.portId),
        'port:device_id',
        stored(data.deviceId),
        'port:device_owner',
        stored(data.deviceOwner),
        'port:binding:host_id',
        stored(data.host),
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
        'port:id',
        stored(data.portId),
        'port:device_id',
        stored(data.deviceId),
        'port:device_owner',
        stored(data.deviceOwner),
        'port:binding:host_id',
        stored(data.boundHost),
        'host',
        data.host,
      ];
    }
  }
}
