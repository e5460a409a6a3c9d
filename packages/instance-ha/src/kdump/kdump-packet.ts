/**
 * fence_kdump's message (docs/instance-ha-rules.md#fence_kdump-packets): exactly 8 bytes, two unsigned 32-bit
 * integers in the sender's byte order: magic 0x1B302A40, version 1. x86 and arm64 senders send
 * little-endian (`40 2a 30 1b 01 00 00 00`); big-endian senders are accepted too, as InstanceHA does.
 */
export const FENCE_KDUMP_MAGIC = 0x1b302a40;
export const FENCE_KDUMP_VERSION = 1;
export const FENCE_KDUMP_MESSAGE_BYTES = 8;

/** Why a datagram is not a fence_kdump message (the label of the garbage counter). */
export type KdumpRejection = 'wrong-length' | 'bad-magic' | 'bad-version';

export type KdumpPacket =
  | { readonly valid: true; readonly byteOrder: 'little-endian' | 'big-endian'; readonly version: number }
  | { readonly valid: false; readonly reason: KdumpRejection };

/**
 * Parses one datagram. The magic is read in either byte order; the version, read in the same order,
 * must be 1 (as fence_kdump itself requires; InstanceHA ignored it).
 */
export function parseKdumpPacket(datagram: Uint8Array): KdumpPacket {
  if (datagram.length !== FENCE_KDUMP_MESSAGE_BYTES) return { valid: false, reason: 'wrong-length' };
  const view = new DataView(datagram.buffer, datagram.byteOffset, datagram.byteLength);
  let littleEndian: boolean;
  if (view.getUint32(0, true) === FENCE_KDUMP_MAGIC) littleEndian = true;
  else if (view.getUint32(0, false) === FENCE_KDUMP_MAGIC) littleEndian = false;
  else return { valid: false, reason: 'bad-magic' };
  const version = view.getUint32(4, littleEndian);
  if (version !== FENCE_KDUMP_VERSION) return { valid: false, reason: 'bad-version' };
  return { valid: true, byteOrder: littleEndian ? 'little-endian' : 'big-endian', version };
}

/** Encodes a fence_kdump message (tests, simulators). */
export function encodeKdumpPacket(
  byteOrder: 'little-endian' | 'big-endian' = 'little-endian',
  version = FENCE_KDUMP_VERSION,
): Buffer {
  const buffer = Buffer.alloc(FENCE_KDUMP_MESSAGE_BYTES);
  if (byteOrder === 'little-endian') {
    buffer.writeUInt32LE(FENCE_KDUMP_MAGIC, 0);
    buffer.writeUInt32LE(version, 4);
  } else {
    buffer.writeUInt32BE(FENCE_KDUMP_MAGIC, 0);
    buffer.writeUInt32BE(version, 4);
  }
  return buffer;
}
