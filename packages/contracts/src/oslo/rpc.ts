import { z } from 'zod';

/** 32 lowercase hex characters: oslo's `uuid.uuid4().hex` form of `_unique_id` and `_msg_id`. */
const OsloHexId = z.string().regex(/^[0-9a-f]{32}$/, 'must be 32 hex characters');

/** An RPC API version "X.Y" (optionally "X.Y.Z"); oslo defaults a missing version to "1.0". */
export const OsloVersion = z.string().regex(/^\d+\.\d+(\.\d+)?$/, 'must look like "1.9"');

/**
 * A decoded oslo.messaging RPC request (cast or call), as found inside `oslo.message`.
 * Calls carry `_msg_id`, `_reply_q` and `_timeout`; casts do not. The request context travels
 * flattened as `_context_<key>` fields, and any set of them is accepted (their names change between
 * neutron-lib releases). Source: docs/oslo-messaging.md#message-body and fixtures/oslo 01–15.
 */
export const OsloRequest = z
  .object({
    method: z.string().min(1, 'must be a non-empty method name'),
    args: z.record(z.string(), z.unknown()).default({}),
    version: OsloVersion.default('1.0'),
    namespace: z.string().nullable().optional(),
    _unique_id: OsloHexId.optional(),
    _msg_id: OsloHexId.optional(),
    _reply_q: z.string().min(1).optional(),
    /** The caller's call_monitor_timeout in seconds (heartbeat request), or null; not the call timeout. */
    _timeout: z.number().nullable().optional(),
  })
  .catchall(z.unknown());
export type OsloRequest = z.output<typeof OsloRequest>;

/** True when the request is a call (expects a reply on `_reply_q`), false for a cast. */
export function isOsloCall(
  request: OsloRequest,
): request is OsloRequest & { _msg_id: string; _reply_q: string } {
  return typeof request._msg_id === 'string' && typeof request._reply_q === 'string';
}

/**
 * The request context of an oslo request: every `_context_<key>` field, with the prefix removed.
 * Example: `{ request_id: 'req-…', is_admin: true, roles: [] }`.
 */
export function osloRequestContext(request: Record<string, unknown>): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) {
    if (key.startsWith('_context_')) context[key.slice('_context_'.length)] = value;
  }
  return context;
}

/**
 * The failure payload of an error reply. It travels as a JSON **string** in the reply's `failure`
 * field: `{class, module, message, tb: [lines], args: [...], kwargs: {...}}`. A Python client rebuilds
 * the exception only when `module` is builtins or allowed, else raises RemoteError(exc_type=class).
 * Source: docs/oslo-messaging.md#server-rules rule 5, fixtures/oslo 08–11.
 */
export const OsloFailure = z.object({
  class: z.string().min(1),
  module: z.string().min(1),
  message: z.string(),
  tb: z.array(z.string()),
  args: z.array(z.unknown()),
  kwargs: z.record(z.string(), z.unknown()),
});
export type OsloFailure = z.infer<typeof OsloFailure>;

/**
 * A decoded oslo.messaging RPC reply. A final reply has `ending: true`; a call-monitor heartbeat has
 * `result: null, failure: null, ending: false`. `failure`, `ending` and `_msg_id` are required in
 * practice by the client (docs/oslo-messaging.md#client-rules: without `failure` the caller gets KeyError, without `ending`
 * it times out, without `_msg_id` the reply is not matched). `ending` is optional here only to accept
 * the legacy two-part form on receipt.
 */
export const OsloReply = z.object({
  result: z.unknown(),
  failure: z.string().nullable(),
  ending: z.boolean().optional(),
  _msg_id: OsloHexId,
  _unique_id: OsloHexId.optional(),
});
export type OsloReply = z.infer<typeof OsloReply>;

/** The oslo dispatcher's module, used by NoSuchMethod and UnsupportedVersion failures. */
export const OSLO_DISPATCHER_MODULE = 'oslo_messaging.rpc.dispatcher';

/**
 * A failure payload as oslo's dispatcher builds it for `NoSuchMethod`:
 * "Endpoint does not support RPC method <method>" (fixtures/oslo 10).
 */
export function noSuchMethodFailure(method: string): OsloFailure {
  const message = `Endpoint does not support RPC method ${method}`;
  return {
    class: 'NoSuchMethod',
    module: OSLO_DISPATCHER_MODULE,
    message,
    tb: [`oslo_messaging.rpc.dispatcher.NoSuchMethod: ${message}\n`],
    args: [message],
    kwargs: {},
  };
}

/**
 * A failure payload as oslo's dispatcher builds it for `UnsupportedVersion`:
 * "Endpoint does not support RPC version <version>. Attempted method: <method>" (fixtures/oslo 11).
 */
export function unsupportedVersionFailure(version: string, method: string): OsloFailure {
  const message = `Endpoint does not support RPC version ${version}. Attempted method: ${method}`;
  return {
    class: 'UnsupportedVersion',
    module: OSLO_DISPATCHER_MODULE,
    message,
    tb: [`oslo_messaging.rpc.dispatcher.UnsupportedVersion: ${message}\n`],
    args: [message],
    kwargs: {},
  };
}

/** The module of oslo's driver-level exceptions (`oslo_messaging/_drivers/common.py`). */
export const OSLO_DRIVER_COMMON_MODULE = 'oslo_messaging._drivers.common';

/**
 * A failure payload for a request whose envelope version the server does not speak, with oslo's
 * `UnsupportedRpcEnvelopeVersion` message: "Specified RPC envelope version, <version>, not supported
 * by this endpoint." (oslo raises it while decoding and sends no reply; this server replies with it
 * so that the caller does not wait for its timeout.) A Python caller raises it as RemoteError with
 * this `exc_type`.
 */
export function unsupportedEnvelopeFailure(version: string): OsloFailure {
  const message = `Specified RPC envelope version, ${version}, not supported by this endpoint.`;
  return {
    class: 'UnsupportedRpcEnvelopeVersion',
    module: OSLO_DRIVER_COMMON_MODULE,
    message,
    tb: [`${OSLO_DRIVER_COMMON_MODULE}.UnsupportedRpcEnvelopeVersion: ${message}\n`],
    args: [message],
    kwargs: {},
  };
}
