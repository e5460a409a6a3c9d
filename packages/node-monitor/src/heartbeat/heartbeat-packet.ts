import { createHmac, timingSafeEqual } from 'node:crypto';
import { INSTANCE_HA_CONSTANTS, shortHostname } from '@lifeguard/instance-ha';

/**
 * InstanceHA's HBV2 heartbeat (docs/instance-ha-rules.md#heartbeats), all integers in network byte order:
 * `magic u32 = 0x48425632 ("HBV2") | timestamp u64 (Unix seconds) | hostname (UTF-8) | HMAC-SHA256`
 * over every preceding byte (32 bytes). At least 45 bytes.
 */
export const HEARTBEAT_MAGIC = 0x48425632;
export const HEARTBEAT_HMAC_BYTES = 32;
export const HEARTBEAT_MINIMUM_BYTES = 4 + 8 + 1 + HEARTBEAT_HMAC_BYTES;
const HOSTNAME_PATTERN = /^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$/;
const HOSTNAME_MAXIMUM = 64;

/** Why a heartbeat was rejected (the label of `lifeguard_heartbeat_rejected_total`). */
export type HeartbeatRejection =
  | 'too_short'
  | 'bad_magic'
  | 'no_key'
  | 'hmac_failed'
  | 'timestamp_invalid'
  | 'hostname_invalid';

export type HeartbeatResult =
  | { readonly valid: true; readonly host: string; readonly sentAt: Date }
  | { readonly valid: false; readonly reason: HeartbeatRejection };

/**
 * Verifies one heartbeat datagram: magic, HMAC against any of `keys` (current and previous; constant
 * time), timestamp within −120 … +60 s of `now` (docs/instance-ha-rules.md#heartbeats), and a
 * hostname of at most 64 characters (NULs and whitespace stripped) matching InstanceHA's pattern,
 * shortened at the first dot. With no key every heartbeat is rejected (docs/instance-ha-rules.md#heartbeats).
 */
export function verifyHeartbeat(
  datagram: Buffer,
  keys: ReadonlyArray<Buffer>,
  now: Date = new Date(),
): HeartbeatResult {
  if (datagram.length < HEARTBEAT_MINIMUM_BYTES) return { valid: false, reason: 'too_short' };
  if (datagram.readUInt32BE(0) !== HEARTBEAT_MAGIC) return { valid: false, reason: 'bad_magic' };
  if (keys.length === 0) return { valid: false, reason: 'no_key' };
  const body = datagram.subarray(0, datagram.length - HEARTBEAT_HMAC_BYTES);
  const signature = datagram.subarray(datagram.length - HEARTBEAT_HMAC_BYTES);
  const authentic = keys.some((key) =>
    timingSafeEqual(createHmac('sha256', key).update(body).digest(), signature),
  );
  if (!authentic) return { valid: false, reason: 'hmac_failed' };
  const seconds = Number(datagram.readBigUInt64BE(4));
  const age = now.getTime() / 1000 - seconds;
  if (
    age > INSTANCE_HA_CONSTANTS.heartbeatAcceptPastSeconds ||
    age < -INSTANCE_HA_CONSTANTS.heartbeatAcceptFutureSeconds
  ) {
    return { valid: false, reason: 'timestamp_invalid' };
  }
  let name: string;
  try {
    name = new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(12));
  } catch {
    return { valid: false, reason: 'hostname_invalid' };
  }
  name = name.replaceAll('\0', '').trim();
  if (name.length === 0 || name.length > HOSTNAME_MAXIMUM || !HOSTNAME_PATTERN.test(name)) {
    return { valid: false, reason: 'hostname_invalid' };
  }
  return { valid: true, host: shortHostname(name), sentAt: new Date(seconds * 1000) };
}

/** Builds a heartbeat as the compute-side sender does (tests, simulators). */
export function encodeHeartbeat(host: string, key: Buffer, sentAt: Date = new Date()): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt32BE(HEARTBEAT_MAGIC, 0);
  header.writeBigUInt64BE(BigInt(Math.floor(sentAt.getTime() / 1000)), 4);
  const body = Buffer.concat([header, Buffer.from(host, 'utf8')]);
  return Buffer.concat([body, createHmac('sha256', key).update(body).digest()]);
}
