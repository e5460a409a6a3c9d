import { z } from 'zod';
import { ContractViolationError } from '../errors.ts';
import { parseWith } from '../parse.ts';

/** The only envelope version oslo.messaging sends and accepts ("major equal, minor not greater than 0"). */
export const OSLO_ENVELOPE_VERSION = '2.0';

/**
 * The outer JSON body of every oslo.messaging rabbit-driver message:
 * `{"oslo.version": "2.0", "oslo.message": "<the RPC message, JSON-encoded as a string>"}`.
 * Source: oslo.messaging `_drivers/common.py` (serialize_msg / deserialize_msg).
 */
export const OsloEnvelope = z.object({
  'oslo.version': z.string().regex(/^\d+\.\d+$/, 'must look like "2.0"'),
  'oslo.message': z.string(),
});
export type OsloEnvelope = z.infer<typeof OsloEnvelope>;

/**
 * Decodes an AMQP body as oslo.messaging does on receipt: JSON, then, when the object carries the
 * `oslo.version`/`oslo.message` keys, the inner JSON string; a plain object without those keys is the
 * pre-envelope ("bare") form and is returned as it is.
 *
 * @param body the raw AMQP message body (UTF-8 JSON)
 * @returns the decoded inner message object (not yet validated as request or reply)
 * @throws ContractViolationError when the body is not JSON, not an object, carries an envelope version
 *   other than 2.0 (oslo's rule: same major, minor not greater than 0), or an inner message that is not a
 *   JSON object.
 */
export function decodeOsloBody(body: Buffer | string): Record<string, unknown> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let outer: unknown;
  try {
    outer = JSON.parse(text);
  } catch (error) {
    throw new ContractViolationError('oslo message body', `body is not JSON: ${(error as Error).message}`);
  }
  if (typeof outer !== 'object' || outer === null || Array.isArray(outer)) {
    throw new ContractViolationError('oslo message body', 'body is not a JSON object');
  }
  if (!('oslo.version' in outer) && !('oslo.message' in outer)) {
    return outer as Record<string, unknown>;
  }
  const envelope = parseWith(OsloEnvelope, outer, 'oslo envelope');
  const [major, minor] = envelope['oslo.version'].split('.').map(Number);
  if (major !== 2 || (minor ?? 0) > 0) {
    throw new ContractViolationError('oslo envelope', [
      {
        path: ['oslo.version'],
        message: `unsupported envelope version ${envelope['oslo.version']} (expected 2.0)`,
      },
    ]);
  }
  let inner: unknown;
  try {
    inner = JSON.parse(envelope['oslo.message']);
  } catch (error) {
    throw new ContractViolationError('oslo envelope', [
      { path: ['oslo.message'], message: `not JSON: ${(error as Error).message}` },
    ]);
  }
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
    throw new ContractViolationError('oslo envelope', [
      { path: ['oslo.message'], message: 'not a JSON object' },
    ]);
  }
  return inner as Record<string, unknown>;
}

/**
 * Wraps an RPC message in the 2.0 envelope, as oslo.messaging's rabbit driver publishes it.
 * @returns the AMQP body as a string
 */
export function encodeOsloBody(message: Record<string, unknown>): string {
  return JSON.stringify({ 'oslo.version': OSLO_ENVELOPE_VERSION, 'oslo.message': JSON.stringify(message) });
}

/**
 * AMQP properties oslo.messaging sets on everything it publishes (requests, replies, heartbeats):
 * `content_type` application/json (without it an oslo client discards a reply), `content_encoding`
 * utf-8, persistent delivery, priority 0, empty headers. Source: captures in fixtures/oslo (README).
 */
export const OSLO_MESSAGE_PROPERTIES = {
  contentType: 'application/json',
  contentEncoding: 'utf-8',
  deliveryMode: 2,
  priority: 0,
  headers: {},
} as const;

/** Where the reply to a call goes: the caller's reply queue and the call's message id. */
export interface OsloReplyAddress {
  readonly replyQueue: string;
  readonly msgId: string;
  /** The body's `oslo.version` as sent (a string even when it is not one in the body). */
  readonly envelopeVersion: string;
}

/**
 * Reads, from a body that decodeOsloBody refused, where a reply would go: for an envelope whose
 * `oslo.version` is unsupported or malformed but whose `oslo.message` is a JSON object carrying a
 * `_reply_q` (non-empty string) and a `_msg_id` (string), so that the caller can be told at once.
 * @returns the address, or null when the body carries none (not JSON, no envelope, no call)
 */
export function peekOsloReplyAddress(body: Buffer | string): OsloReplyAddress | null {
  let outer: unknown;
  let inner: unknown;
  try {
    outer = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
    const message = (outer as Record<string, unknown>)['oslo.message'];
    if (typeof message !== 'string') return null;
    inner = JSON.parse(message);
  } catch {
    return null;
  }
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return null;
  const { _reply_q: replyQueue, _msg_id: msgId } = inner as Record<string, unknown>;
  if (typeof replyQueue !== 'string' || replyQueue.length === 0 || typeof msgId !== 'string') return null;
  const version = (outer as Record<string, unknown>)['oslo.version'];
  return {
    replyQueue,
    msgId,
    envelopeVersion: typeof version === 'string' ? version : JSON.stringify(version),
  };
}
