import fc from 'fast-check';

/** One message to publish: body bytes and AMQP headers, and what kind of bad input it is. */
export interface FuzzMessage {
  readonly kind: string;
  readonly body: Buffer;
  readonly headers?: Record<string, unknown>;
  /** For an oslo call: the `_msg_id` its reply must carry. */
  readonly msgId?: string;
  /**
   * An oslo call answered to a reply queue that does not exist: if it fails, it is dead-lettered;
   * otherwise nothing can be observed of it but that the queue goes on.
   */
  readonly unanswerable?: boolean;
}

const hex32 = fc.stringMatching(/^[0-9a-f]{32}$/);
const uuid = fc.uuid({ version: 4 });
const jsonBody = (value: unknown) => Buffer.from(JSON.stringify(value));

/** Bytes that are not JSON at all, or JSON cut short. */
const brokenJson = fc.oneof(
  fc.string({ maxLength: 200 }).map((text) => `{${text}`),
  fc.jsonValue().map((value) => JSON.stringify(value).slice(0, -1) || '{'),
  fc.constantFrom('', ' ', 'null,', '{"a":', '[1,2', 'undefined', 'NaN', '{"oslo.version":"2.0"'),
);

/** Byte sequences that are not UTF-8 (lone continuation bytes, overlong forms, surrogates). */
const badUtf8 = fc
  .tuple(
    fc.uint8Array({ minLength: 1, maxLength: 64 }),
    fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]),
  )
  .map(([random, invalid]) =>
    Buffer.concat([Buffer.from('{"x":"'), Buffer.from(invalid), Buffer.from(random), Buffer.from('"}')]),
  );

/** A large body (0.5 to 2 MiB) of a valid JSON string. */
const hugePayload = fc
  .integer({ min: 512 * 1024, max: 2 * 1024 * 1024 })
  .map((size) => JSON.stringify({ padding: 'x'.repeat(size) }));

/** AMQP headers far larger than usual (up to ~90 KiB in all, under RabbitMQ's 128 KiB frame). */
const oversizedHeaders = fc
  .array(
    fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1000, maxLength: 3000 })),
    {
      minLength: 5,
      maxLength: 30,
    },
  )
  .map((entries) =>
    Object.fromEntries(entries.map(([key, value], index) => [`x-fuzz-${index}-${key}`, value])),
  );

/**
 * Headers just under the 64 KiB a header table may take (one value of 63 to 65.3 KB): publishable,
 * but a copy with anything added is not.
 */
const headersAtTheLimit = fc
  .integer({ min: 63_000, max: 65_300 })
  .map((size) => ({ 'x-fuzz-bulk': 'x'.repeat(size) }));

/** Any JSON value but an object with the right shape: wrong types everywhere. */
const wrongTypes = fc.jsonValue({ maxDepth: 3 }).map((value) => Buffer.from(JSON.stringify(value)));

/** Messages that are bad for any consumer, whatever its contract. */
export function genericBadMessage(): fc.Arbitrary<FuzzMessage> {
  return fc.oneof(
    { weight: 4, arbitrary: brokenJson.map((text) => ({ kind: 'broken-json', body: Buffer.from(text) })) },
    { weight: 3, arbitrary: badUtf8.map((body) => ({ kind: 'bad-utf8', body })) },
    { weight: 4, arbitrary: wrongTypes.map((body) => ({ kind: 'wrong-types', body })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(oversizedHeaders, fc.jsonValue({ maxDepth: 2 }))
        .map(([headers, value]) => ({ kind: 'oversized-headers', body: jsonBody(value), headers })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(headersAtTheLimit, fc.jsonValue({ maxDepth: 1 }))
        .map(([headers, value]) => ({ kind: 'headers-at-the-limit', body: jsonBody(value), headers })),
    },
  );
}

/** An event-shaped object of `type` with some fields of the wrong type or missing. */
export function malformedEvent(type: string): fc.Arbitrary<FuzzMessage> {
  return fc
    .record(
      {
        id: fc.oneof(uuid, fc.string(), fc.integer()),
        schemaVersion: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 99 }), fc.string()),
        occurredAt: fc.oneof(
          fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
          fc.string(),
        ),
        source: fc.oneof(fc.constant({ service: 'fuzz', instance: 'fuzz:1' }), fc.jsonValue()),
        type: fc.oneof(fc.constant(type), fc.string()),
        data: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 })),
        ),
      },
      { requiredKeys: [] },
    )
    .map((event) => ({ kind: 'malformed-event', body: jsonBody(event) }));
}

/** Native JSON messages with a `command`/`type` discriminator that is unknown or whose fields are wrong. */
export function malformedNative(
  discriminator: 'command' | 'type',
  known: ReadonlyArray<string>,
): fc.Arbitrary<FuzzMessage> {
  return fc
    .tuple(
      fc.oneof(fc.constantFrom(...known), fc.string()),
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
    )
    .map(([name, fields]) => ({
      kind: `malformed-${discriminator}`,
      body: jsonBody({ ...fields, [discriminator]: name }),
    }));
}

/**
 * oslo requests that are bad in the envelope or the message: envelope versions other than 2.0 (and
 * not strings), `oslo.message` that is not JSON or not an object, unknown methods, wrong argument
 * types, versions no endpoint serves. About half are calls (with `replyQueue` and a fresh
 * `_msg_id`), the rest casts.
 */
export function malformedOslo(replyQueue: string): fc.Arbitrary<FuzzMessage> {
  const call = fc.record({ _msg_id: hex32, _reply_q: fc.constant(replyQueue), _timeout: fc.constant(null) });
  // A call whose reply queue does not exist: nobody can be answered, the request must not hold up others.
  const unanswerable = fc.record({ _msg_id: hex32, _reply_q: hex32.map((name) => `reply_gone_${name}`) });
  const address = fc.oneof(
    { weight: 10, arbitrary: call },
    { weight: 1, arbitrary: unanswerable },
    { weight: 10, arbitrary: fc.constant({}) },
  );
  const inner = fc.oneof(
    fc.record({
      method: fc.oneof(
        fc.string(),
        fc.constantFrom('no_such_method', 'get_active_networks_info', '__init__'),
      ),
      args: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
      version: fc.constantFrom('1.0', '1.9', '2.0', '9.9'),
    }),
    fc.record({
      method: fc.constantFrom('update_device_up', 'dhcp_ready_on_ports', 'report_state'),
      args: fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
      ),
      version: fc.oneof(fc.constantFrom('1.5', '1.9', 'one', ''), fc.integer()),
    }),
    fc.record({ method: fc.oneof(fc.integer(), fc.constant(''), fc.constant(null)), args: fc.jsonValue() }),
  );
  const envelope = fc.tuple(
    fc.oneof(
      { weight: 6, arbitrary: fc.constant('2.0') },
      { weight: 1, arbitrary: fc.constantFrom('3.0', '2.1', '1.0', 'x') },
      { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null)) },
    ),
    fc.oneof({ weight: 8, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  );
  return fc
    .tuple(inner, address, fc.option(hex32, { nil: undefined }), envelope)
    .map(([message, replyTo, uniqueId, [version, innerIsJson]]) => {
      const full = { ...message, ...replyTo, ...(uniqueId ? { _unique_id: uniqueId } : {}) };
      const encoded = innerIsJson ? JSON.stringify(full) : `${JSON.stringify(full).slice(0, -2)}`;
      const body = jsonBody({ 'oslo.version': version, 'oslo.message': encoded });
      if ('_reply_q' in replyTo && replyTo._reply_q !== replyQueue) {
        return { kind: 'unanswerable-oslo', body, unanswerable: true };
      }
      const msgId = '_msg_id' in replyTo ? (replyTo._msg_id as string) : undefined;
      return { kind: 'malformed-oslo', body, ...(msgId ? { msgId } : {}) };
    });
}

/** A few huge payloads for any consumer. */
export function hugeMessage(): fc.Arbitrary<FuzzMessage> {
  return hugePayload.map((text) => ({ kind: 'huge', body: Buffer.from(text) }));
}
