import { OsloRequest } from '@lifeguard/contracts';

const HEX32 = /^[0-9a-f]{32}$/;
const VERSION = /^\d+\.\d+(\.\d+)?$/;

const optionalHex = (value: unknown) =>
  value === undefined || (typeof value === 'string' && HEX32.test(value));

/**
 * Reads a decoded oslo request with the contracts' OsloRequest rules, checking the common, valid case
 * by hand (it runs for every agent request) and leaving every other case to the zod schema, so a bad
 * request gets the schema's exact problem.
 * @returns the parsed request, or the zod failure
 */
export function readOsloRequest(
  inner: Record<string, unknown>,
): { success: true; data: OsloRequest } | ReturnType<typeof OsloRequest.safeParse> {
  const { method, args, version, namespace, _reply_q: replyQueue, _timeout: timeout } = inner;
  const valid =
    typeof method === 'string' &&
    method.length > 0 &&
    (args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args))) &&
    (version === undefined || (typeof version === 'string' && VERSION.test(version))) &&
    (namespace === undefined || namespace === null || typeof namespace === 'string') &&
    optionalHex(inner._unique_id) &&
    optionalHex(inner._msg_id) &&
    (replyQueue === undefined || (typeof replyQueue === 'string' && replyQueue.length > 0)) &&
    (timeout === undefined || timeout === null || typeof timeout === 'number');
  if (!valid) return OsloRequest.safeParse(inner);
  return {
    success: true,
    data: {
      ...inner,
      method,
      args: (args ?? {}) as Record<string, unknown>,
      version: (version as string | undefined) ?? '1.0',
    },
  };
}
