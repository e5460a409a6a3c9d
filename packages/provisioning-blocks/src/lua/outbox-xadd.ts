import {
  type OutboxEventType,
  outboxDataFields,
  outboxFieldNames,
  storedPortAttributes,
} from '../store/outbox-fields.ts';

/*
 * The Lua text of the scripts' outbox appends, made from the field table (store/outbox-fields.ts) when
 * the scripts' module loads: a script gives the Lua expression of each field's value, the table the
 * names and their order. A script that names a field the table does not have, or leaves one out,
 * fails at module load instead of writing an entry the relay cannot read.
 */

/** A Lua string literal of `text` (single-quoted). */
export function luaString(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The Lua expressions of an entry's field values, by field name (`type` is the table's own). */
export type LuaFieldValues = Readonly<Record<string, string>>;

/**
 * The field/value arguments of the XADD of an entry of `type`, as Lua: `'id', <value>, 'type',
 * '<type>', ...` in the table's order, each value the Lua expression `values` gives for the field.
 * @throws Error when `values` misses a field of the table or names one it does not have
 */
export function luaOutboxFields(type: OutboxEventType, values: LuaFieldValues): string {
  const names = outboxFieldNames(type);
  const expressions: Record<string, string> = { ...values, type: luaString(type) };
  const unknown = Object.keys(values).filter((name) => name === 'type' || !names.includes(name));
  const absent = names.filter((name) => expressions[name] === undefined);
  if (unknown.length > 0 || absent.length > 0) {
    throw new Error(
      `outbox entry ${type}: the script's fields differ from the table (store/outbox-fields.ts):${
        absent.length > 0 ? ` missing ${absent.join(', ')}` : ''
      }${unknown.length > 0 ? ` not in the table ${unknown.join(', ')}` : ''}`,
    );
  }
  return names.map((name) => `${luaString(name)}, ${expressions[name]}`).join(', ');
}

/** The envelope's values but `type` (the table's own), as Lua expressions. */
export function luaEnvelopeValues(
  id: string,
  occurredAt: string,
  service: string,
  instance: string,
): LuaFieldValues {
  return { id, occurredAt, service, instance };
}

/**
 * The `port:<attribute>` values of an entry of `type`, as Lua expressions that read them from
 * `variable`, the reply of an HMGET of `attributes` on the port record (JSON as stored; a missing
 * attribute is stored as JSON null). `attributes` defaults to the entry's own, in order
 * (luaStoredPortAttributes).
 * @throws Error when an attribute the entry carries is not among `attributes`
 */
export function luaStoredPortValues(
  type: OutboxEventType,
  variable: string,
  attributes: ReadonlyArray<string> = storedPortAttributes(type),
): LuaFieldValues {
  const values: Record<string, string> = {};
  for (const field of outboxDataFields(type)) {
    if (field.portAttribute === undefined) continue;
    const position = attributes.indexOf(field.portAttribute);
    if (position < 0)
      throw new Error(`outbox entry ${type}: port attribute ${field.portAttribute} is not read`);
    values[field.name] = `${variable}[${position + 1}] or 'null'`;
  }
  return values;
}

/** The port record attributes an entry of `type` carries, as the Lua argument list of an HMGET. */
export function luaStoredPortAttributes(type: OutboxEventType): string {
  return luaAttributeList(storedPortAttributes(type));
}

/** Port record attribute names as a Lua argument list (`'id', 'device_id', ...`). */
export function luaAttributeList(attributes: ReadonlyArray<string>): string {
  return attributes.map(luaString).join(', ');
}
