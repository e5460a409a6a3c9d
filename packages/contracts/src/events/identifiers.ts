import { z } from 'zod';

/**
 * An incident id: one failure of one host. Safe inside BullMQ job ids (no `:`, not all digits) and
 * Redis keys. Example: `compute-3.20261130T081502Z.7f3a`.
 */
export const IncidentId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'must be 1-200 characters of letters, digits, ".", "_", "-"')
  .refine((value) => !/^\d+$/.test(value), 'must not be all digits');
export type IncidentId = z.infer<typeof IncidentId>;

/** A compute host name as Nova reports it in `os-services` (`host`). */
export const HostName = z.string().min(1).max(255);

/** An ISO 8601 timestamp with a zone (`2026-11-30T08:15:02.123Z`). */
export const Timestamp = z.iso.datetime({ offset: true });
