import { noSuchMethodFailure, type OsloFailure, unsupportedVersionFailure } from '@lifeguard/contracts';
import type { z } from 'zod';
import type { HandledMarker } from '../store/block-store.ts';

/** What a method gets besides its arguments. */
export interface RpcCallContext {
  /** The caller's `_context_request_id`, when it sent one. */
  readonly requestId: string | null;
  /**
   * For methods with `recordsHandled`: the request's handled marker, to commit with the effect.
   * Null when the request carried no `_unique_id`.
   */
  readonly handled: HandledMarker | null;
  /**
   * A marker of one part of the request (`<handled key>:<part>`), for methods that complete several
   * objects one atomic step each (`update_device_list`): a redelivered request finds the parts it
   * already did. Null when the request carried no `_unique_id`.
   */
  readonly handledPart: (part: string) => HandledMarker | null;
}

/** Returned by a `recordsHandled` method whose marker already existed: the request is a duplicate. */
export const ALREADY_HANDLED: unique symbol = Symbol('already handled');

/** One RPC method: its keyword-argument schema and what it does. */
export interface RpcMethod {
  readonly args: z.ZodType;
  /**
   * Runs the method with validated arguments.
   * @returns the JSON-serialisable result (null for Python's None), or ALREADY_HANDLED
   */
  readonly handler: (args: never, context: RpcCallContext) => Promise<unknown>;
  /**
   * The method commits `context.handled` in the same atomic step as its effect (one Redis round
   * trip instead of three) and returns ALREADY_HANDLED for a duplicate. Only for methods whose result
   * is always null.
   */
  readonly recordsHandled?: boolean;
}

/** An RPC endpoint as oslo's dispatcher sees it: target version and namespace, and its methods. */
export interface RpcEndpoint {
  readonly name: string;
  readonly version: string;
  readonly namespace: string | null;
  readonly methods: ReadonlyMap<string, RpcMethod>;
}

/** The endpoints served on one topic. */
export interface RpcTopic {
  readonly topic: string;
  readonly endpoints: ReadonlyArray<RpcEndpoint>;
}

/**
 * oslo.messaging's version_is_compatible: the requested version is served by an endpoint of version
 * `implemented` when the majors are equal, the requested minor is not greater, and on equal minors
 * the requested revision is not greater.
 */
export function versionIsCompatible(implemented: string, requested: string): boolean {
  const [major, minor, revision] = requested.split('.').map(Number);
  const [implementedMajor, implementedMinor, implementedRevision] = implemented.split('.').map(Number);
  if (major !== implementedMajor) return false;
  if ((minor ?? 0) > (implementedMinor ?? 0)) return false;
  if ((minor ?? 0) === (implementedMinor ?? 0) && (revision ?? 0) > (implementedRevision ?? 0)) return false;
  return true;
}

/**
 * oslo's dispatch rule (docs/oslo-messaging.md#server-rules rule 3): endpoints are tried in order; one qualifies when its
 * namespace equals the request's and its version is compatible; the first qualifying endpoint with the
 * method serves it. When some endpoint qualified but none had the method the answer is NoSuchMethod,
 * when none qualified UnsupportedVersion — the failures oslo sends (fixtures/oslo 10, 11).
 */
export function selectMethod(
  endpoints: ReadonlyArray<RpcEndpoint>,
  method: string,
  version: string,
  namespace: string | null,
): { endpoint: RpcEndpoint; method: RpcMethod } | { failure: OsloFailure } {
  let compatible = false;
  for (const endpoint of endpoints) {
    if (endpoint.namespace !== namespace) continue;
    if (!versionIsCompatible(endpoint.version, version)) continue;
    compatible = true;
    const found = endpoint.methods.get(method);
    if (found) return { endpoint, method: found };
  }
  return { failure: compatible ? noSuchMethodFailure(method) : unsupportedVersionFailure(version, method) };
}

/**
 * A failure payload for an exception raised by a method, in oslo's shape. A Python client re-raises
 * `builtins` exceptions as themselves (ValueError, TypeError) and others as RemoteError.
 */
export function methodFailure(exceptionClass: string, module: string, message: string): OsloFailure {
  const qualified = module === 'builtins' ? exceptionClass : `${module}.${exceptionClass}`;
  return {
    class: exceptionClass,
    module,
    message,
    tb: ['Traceback (most recent call last):\n', `${qualified}: ${message}\n`],
    args: [message],
    kwargs: {},
  };
}
