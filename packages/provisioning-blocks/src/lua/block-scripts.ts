import { LuaScript } from '../store/lua-script.ts';

/**
 * The block store's Lua scripts. Each runs atomically in Redis, which is what fixes Neutron's race
 * (research A.1.4): "remove my block, count what remains, and append the event when none remains"
 * is one indivisible step, so two entities completing at the same instant give exactly one event.
 *
 * Outbox entries are stream entries with the fields `id` (event id), `type`, `routingKey`,
 * `occurredAt` (ISO 8601) and `event` (the event's JSON).
 */

/** KEYS: record, blocks. ARGV: entity. Returns -1 (object missing), 0 (already there), 1 (added). */
export const addBlockScript = new LuaScript(
  'provisioning-block-add',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('SADD', KEYS[2], ARGV[1])
`,
);

/** KEYS: record, blocks. ARGV: entity. Returns 1 when a block was removed, else 0 (never emits). */
export const removeBlockScript = new LuaScript(
  'provisioning-block-remove',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('SREM', KEYS[2], ARGV[1])
`,
);

/** KEYS: record, blocks. Returns 1 when the object exists and has at least one block, else 0. */
export const isBlockedScript = new LuaScript(
  'provisioning-block-is-blocked',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SCARD', KEYS[2]) > 0 then return 1 end
return 0
`,
);

/** Completion outcomes returned by completeScript (first element of its reply). */
export const COMPLETION_CODES = { missing: 0, blocked: 1, emitted: 2, notBoundToHost: 3 } as const;

/**
 * As Neutron's provisioning_complete, atomically.
 * KEYS: record, blocks, outbox.
 * ARGV: entity, event id, routing key, occurredAt, event JSON, host ('' = no host check).
 * With a host, the record is a port and must be bound there (`binding:host_id`), as ML2's
 * update_device_up checks before completing the L2 entity (research A.3.2).
 * Returns {code, removed[, device_owner JSON, device_id JSON, binding:host_id JSON]}: code 0 object missing (nothing
 * stored, no event), 1 blocks remain (no event), 2 event appended, 3 port not bound to that host
 * (nothing changed; its owner and device id are returned for the direct Nova notification).
 */
export const completeScript = new LuaScript(
  'provisioning-complete',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
if ARGV[6] ~= '' then
  local bound = redis.call('HGET', KEYS[1], 'binding:host_id')
  if (not bound) or cjson.decode(bound) ~= ARGV[6] then
    return {3, 0, redis.call('HGET', KEYS[1], 'device_owner') or '""', redis.call('HGET', KEYS[1], 'device_id') or '""',
      bound or '""'}
  end
end
local removed = redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('SCARD', KEYS[2]) > 0 then return {1, removed} end
redis.call('XADD', KEYS[3], '*', 'id', ARGV[2], 'type', 'provisioning.complete', 'routingKey', ARGV[3],
  'occurredAt', ARGV[4], 'event', ARGV[5])
return {2, removed}
`,
);
