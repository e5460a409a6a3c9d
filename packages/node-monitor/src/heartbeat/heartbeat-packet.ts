import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  HEARTBEAT_HMAC_BYTES,
  HEARTBEAT_MAGIC,
  HEARTBEAT_MINIMUM_BYTES,
  type HostAgentReport,
  parseHostAgentReport,
} from '@lifeguard/contracts';
import { INSTANCE_HA_CONSTANTS, shortHostname } from '@lifeguard/instance-ha';

export { encodeHeartbeat, HEARTBEAT_MAGIC } from '@lifeguard/contracts';

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
  | {
      readonly valid: true;
      readonly host: string;
      readonly sentAt: Date;
      /** What a lifeguard host agent said beside the name; absent in InstanceHA's own heartbeats. */
      readonly report?: HostAgentReport;
    }
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
  const { host, report } = splitNameField(name);
  if (host.length === 0 || host.length > HOSTNAME_MAXIMUM || !HOSTNAME_PATTERN.test(host)) {
    return { valid: false, reason: 'hostname_invalid' };
  }
  const sentAt = new Date(seconds * 1000);
  return report
    ? { valid: true, host: shortHostname(host), sentAt, report }
    : { valid: true, host: shortHostname(host), sentAt };
}

/**
 * The host name and the host agent's report of a name field: the text before the first NUL is the
 * name when what follows it is a report (contracts' parseHostAgentReport); otherwise the field is
 * read as InstanceHA reads it, NULs and whitespace stripped.
 */
function splitNameField(field: string): { host: string; report: HostAgentReport | null } {
  const nul = field.indexOf('\0');
  if (nul > 0) {
    const report = parseHostAgentReport(field.slice(nul + 1));
    if (report) return { host: field.slice(0, nul).trim(), report };
  }
  return { host: field.replaceAll('\0', '').trim(), report: null };
}
