import {
  type EventEnvelope,
  LifeguardEvent,
  portStatusChangedEvent,
  portVifPluggedEvent,
  provisioningCompleteEvent,
} from '@lifeguard/contracts';
import { z } from 'zod';
import {
  envelopeText,
  isOutboxEventType,
  OUTBOX_ENVELOPE_FIELDS,
  type OutboxEvent,
  type OutboxEventType,
  outboxDataFields,
  TEXT,
  UnpublishableEntryError,
} from './outbox-fields.ts';

/*
 * An outbox entry's fields (store/outbox-fields.ts) turned into the event, once, by the contracts'
 * builders, and the inverse for an event built in TypeScript. Entries written before this layout
 * carry the event's JSON in a field `event` instead; they are validated against the event schemas and
 * published as they are.
 */

export type { OutboxEvent } from './outbox-fields.ts';

/** What reading an outbox entry gave: its event, or why it cannot be published. */
export type OutboxReading = { readonly event: LifeguardEvent } | { readonly unpublishable: string };

/** The contracts builder of each outbox event type, which validates the event it builds. */
const BUILDERS: {
  readonly [Type in OutboxEventType]: (envelope: EventEnvelope, data: never) => OutboxEvent;
} = {
  'provisioning.complete': provisioningCompleteEvent,
  'port.status.changed': portStatusChangedEvent,
  'port.vif.plugged': portVifPluggedEvent,
};

/**
 * The event the fields of an entry give, built and validated by its contracts builder (the zod
 * schema of the event is the check on what the scripts wrote).
 * @throws UnpublishableEntryError for a missing field or an unknown type
 * @throws ContractViolationError when the event fails its schema
 */
function eventOf(values: Record<string, string>): OutboxEvent {
  const type = TEXT.decode(values.type, 'type') as string;
  if (!isOutboxEventType(type))
    throw new UnpublishableEntryError(`type: not an event of the outbox: ${type}`);
  const envelope = {} as Record<(typeof OUTBOX_ENVELOPE_FIELDS)[number], string>;
  for (const name of OUTBOX_ENVELOPE_FIELDS) envelope[name] = TEXT.decode(values[name], name) as string;
  const data: Record<string, unknown> = {};
  for (const field of outboxDataFields(type)) {
    const value = field.codec.decode(values[field.name], field.name);
    if (value !== undefined) data[field.property] = value;
  }
  return BUILDERS[type](
    {
      id: envelope.id,
      occurredAt: envelope.occurredAt,
      source: { service: envelope.service, instance: envelope.instance },
    },
    data as never,
  );
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

/**
 * The stream fields of an event built in TypeScript (the inverse of readOutboxEntry), for the
 * scripts that append an event whose facts they do not read themselves.
 */
export function outboxFieldsOf(event: OutboxEvent): string[] {
  const fields: string[] = [];
  for (const name of OUTBOX_ENVELOPE_FIELDS) fields.push(name, envelopeText(event, name));
  const data = event.data as Record<string, unknown>;
  for (const field of outboxDataFields(event.type))
    fields.push(field.name, field.codec.encode(data[field.property]));
  return fields;
}
