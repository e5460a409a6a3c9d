/**
 * What a resource handler gets: the request's parts, the store, the checks that need other
 * services, and `authorize`, which it calls after validating the body (Masakari validates first and
 * applies the policy second, so a bad body is a 400 even for a caller without the admin role).
 */
import { MasakariError } from '../../errors.ts';
import type { NotificationRecord } from '../../records.ts';
import type { MasakariStore } from '../../store/masakari-store.ts';
import type { HostNameCheck, SegmentWrites } from '../../store/segment-writes.ts';
import type { Schema } from '../json-schema.ts';
import { type Parsed, strictBoolean } from '../list-query.ts';
import type { Microversion } from '../microversion.ts';
import type { Route } from '../router.ts';
import { checkBody } from '../validate-body.ts';

export interface HandlerServices {
  store: MasakariStore;
  writes: SegmentWrites;
  /** Throws ComputeNotFoundByNameError when Nova lists no nova-compute service on that host. */
  checkComputeHost: HostNameCheck;
  /** Masakari's duplicate_notification_detection_interval, in seconds. */
  duplicateSeconds: number;
  /** Puts an accepted (stored) notification's job on the queue. */
  enqueue: (notification: NotificationRecord) => Promise<void>;
}

export interface HandlerRequest {
  route: Extract<Route, { kind: 'resource' }>;
  version: Microversion;
  query: URLSearchParams;
  /** The parsed JSON body; null when there was none. */
  body: unknown;
  /** Throws the 403 of the route's policy rule when the caller may not call it. */
  authorize: () => void;
}

export interface HandlerResponse {
  status: number;
  body: unknown;
}

export type Handler = (request: HandlerRequest, services: HandlerServices) => Promise<HandlerResponse>;

/** Throws Masakari's 400 when `body` does not match `schema`. */
export function requireValid(schema: Schema, body: unknown): void {
  const message = checkBody(schema, body);
  if (message !== null) throw new MasakariError(400, message);
}

/** The value of a Parsed, or its message as a 400. */
export function orBadRequest<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new MasakariError(400, parsed.message);
  return parsed.value;
}

/** A boolean body field already checked by the schema (JSON boolean or one of its strings). */
export function bodyBoolean(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  return orBadRequest(strictBoolean(String(value), 'boolean'));
}

/** The body's wrapped object (`{"segment": {...}}` → `{...}`), after validation. */
export function wrapped(body: unknown, key: string): Record<string, unknown> {
  return (body as Record<string, Record<string, unknown>>)[key]!;
}
