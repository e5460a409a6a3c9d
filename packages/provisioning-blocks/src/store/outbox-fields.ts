import type { EventData, EventOf } from '@lifeguard/contracts';

/*
 * The one list of an outbox entry's fields. An outbox entry is a Redis stream entry holding the facts
 * of one event, written in the same Lua script as the state change it reports (so the two commit
 * together). The scripts' XADD field lists (lua/outbox-xadd.ts), the encoder of an event built in
 * TypeScript and the decoder the relay runs (store/outbox-entry.ts) are all made from the tables
 * below, so a field is named, ordered and encoded in this file only.
 *
 * Every entry starts with the envelope (OUTBOX_ENVELOPE_FIELDS, all text): id (the event id, a UUID
 * fixed before the commit: every relay of the entry publishes it), type, occurredAt (ISO 8601),
 * service and instance (the event's source). The fields of each type's data follow
 * (OUTBOX_DATA_FIELDS). A `port:<attribute>` field holds a port record's attribute as the record
 * stores it (JSON), so a script copies it from the record without decoding it.
 */

/** The event types the provisioning service publishes through its outbox. */
export type OutboxEventType = 'provisioning.complete' | 'port.status.changed' | 'port.vif.plugged';

/** The events the provisioning service publishes through its outbox. */
export type OutboxEvent = EventOf<OutboxEventType>;

/** An outbox entry's fields that give no event; the message names the field. */
export class UnpublishableEntryError extends Error {}

/** How one field's text is made from an event data value and read back into it. */
export interface OutboxFieldCodec {
  /** The field's text for a data value. */
  encode(value: unknown): string;
  /**
   * The data value of the field's text (undefined: the field is absent), or undefined to leave the
   * property out.
   * @throws UnpublishableEntryError naming `name` when the text gives no value
   */
  decode(text: string | undefined, name: string): unknown;
}

function missing(name: string): UnpublishableEntryError {
  return new UnpublishableEntryError(`${name}: missing`);
}

/** Text as it is; the field must be there. */
export const TEXT: OutboxFieldCodec = {
  encode: (value) => String(value),
  decode(text, name) {
    if (text === undefined) throw missing(name);
    return text;
  },
};

/** Text that may be absent: absent and `''` both mean none. */
export const TEXT_OR_EMPTY: OutboxFieldCodec = {
  encode: (value) => (value === undefined || value === null ? '' : String(value)),
  decode: (text) => text ?? '',
};

/** A boolean that may be absent: `'1'`, `'0'`, or `''` (and an absent field) when not given. */
export const OPTIONAL_FLAG: OutboxFieldCodec = {
  encode: (value) => (value === undefined ? '' : value ? '1' : '0'),
  decode(text) {
    const flag = text ?? '';
    return flag === '' ? undefined : flag === '1';
  },
};

/**
 * A port record attribute as stored (JSON). A missing value is stored as JSON null; a stored null
 * reads back as `fallback` (the event's schema then judges it).
 */
export function storedAttribute(fallback: string): OutboxFieldCodec {
  return {
    encode: (value) => JSON.stringify(value ?? null),
    decode(text, name) {
      if (text === undefined) throw missing(name);
      try {
        return (JSON.parse(text) as unknown) ?? fallback;
      } catch {
        throw new UnpublishableEntryError(`${name}: not JSON: ${text.slice(0, 80)}`);
      }
    },
  };
}

/** The envelope's fields, first in every entry, in this order. */
export const OUTBOX_ENVELOPE_FIELDS = ['id', 'type', 'occurredAt', 'service', 'instance'] as const;

/** One field of the envelope. */
export type OutboxEnvelopeField = (typeof OUTBOX_ENVELOPE_FIELDS)[number];

/** The text of an envelope field for an event. */
export function envelopeText(event: OutboxEvent, field: OutboxEnvelopeField): string {
  switch (field) {
    case 'id':
      return event.id;
    case 'type':
      return event.type;
    case 'occurredAt':
      return event.occurredAt;
    case 'service':
      return event.source.service;
    case 'instance':
      return event.source.instance;
  }
}

/** One field of an event's data in its outbox entry. */
export interface OutboxDataField {
  /** The stream field's name. */
  readonly name: string;
  /** The event data property the field carries. */
  readonly property: string;
  readonly codec: OutboxFieldCodec;
  /** For a `port:<attribute>` field: the port record attribute a script copies into it. */
  readonly portAttribute?: string;
}

/** A field of the data of `Type`: its property is one of that data's. */
type DataFieldOf<Type extends OutboxEventType> = OutboxDataField & {
  readonly property: keyof EventData<Type> & string;
};

/** A `port:<attribute>` field: the port record's attribute as stored, carried by data `property`. */
function storedPortField<Property extends string>(
  attribute: string,
  property: Property,
  fallback = '',
): OutboxDataField & { readonly property: Property } {
  return { name: `port:${attribute}`, property, codec: storedAttribute(fallback), portAttribute: attribute };
}

/** The fields of each type's data, after the envelope, in this order. */
export const OUTBOX_DATA_FIELDS: {
  readonly [Type in OutboxEventType]: ReadonlyArray<DataFieldOf<Type>>;
} = {
  'provisioning.complete': [
    { name: 'objectType', property: 'objectType', codec: TEXT },
    { name: 'objectId', property: 'objectId', codec: TEXT },
    { name: 'entity', property: 'entity', codec: TEXT },
    { name: 'requestId', property: 'requestId', codec: TEXT_OR_EMPTY },
  ],
  'port.status.changed': [
    storedPortField('id', 'portId'),
    storedPortField('device_id', 'deviceId'),
    storedPortField('device_owner', 'deviceOwner'),
    storedPortField('binding:host_id', 'host'),
    // The status before the change.
    storedPortField('status', 'previousStatus', 'DOWN'),
    { name: 'status', property: 'status', codec: TEXT },
    { name: 'notifyNova', property: 'notifyNova', codec: OPTIONAL_FLAG },
  ],
  'port.vif.plugged': [
    storedPortField('id', 'portId'),
    storedPortField('device_id', 'deviceId'),
    storedPortField('device_owner', 'deviceOwner'),
    storedPortField('binding:host_id', 'boundHost'),
    // The reporting agent's host.
    { name: 'host', property: 'host', codec: TEXT },
  ],
};

/** Whether `type` is an event type of the outbox. */
export function isOutboxEventType(type: string): type is OutboxEventType {
  return Object.hasOwn(OUTBOX_DATA_FIELDS, type);
}

/** The fields of the data of an entry of `type`, in the order the entry holds them. */
export function outboxDataFields(type: OutboxEventType): ReadonlyArray<OutboxDataField> {
  return OUTBOX_DATA_FIELDS[type];
}

/** Every field name of an entry of `type`, in the order the entry holds them. */
export function outboxFieldNames(type: OutboxEventType): string[] {
  return [...OUTBOX_ENVELOPE_FIELDS, ...outboxDataFields(type).map((field) => field.name)];
}

/** The port record attributes an entry of `type` copies into its `port:<attribute>` fields, in order. */
export function storedPortAttributes(type: OutboxEventType): string[] {
  return outboxDataFields(type).flatMap((field) =>
    field.portAttribute === undefined ? [] : [field.portAttribute],
  );
}
