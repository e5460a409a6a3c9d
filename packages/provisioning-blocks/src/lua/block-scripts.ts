import type { RedisScript } from '@lifeguard/runtime';
import {
  luaEnvelopeValues,
  luaOutboxFields,
  luaStoredPortAttributes,
  luaStoredPortValues,
} from './outbox-xadd.ts';

/**
 * The block store's Lua scripts. Each runs atomically in Redis, which is what fixes Neutron's race
 * (docs/neutron-provisioning-rules.md#races): "remove my block, count what remains, and append the event when none remains"
 * is one indivisible step, so two entities completing at the same instant give exactly one event.
 *
 * The scripts append the facts of an event to the outbox, not the event: its fields are listed in
 * store/outbox-fields.ts, from which the XADD field lists below are made (lua/outbox-xadd.ts), and
 * store/outbox-entry.ts builds and validates the event from them before the relay publishes it.
 */

/** The envelope of an event completeScript appends: event id `id` (Lua), occurredAt, service and instance ARGV[6..8]. */
const completionEnvelope = (id: string) => luaEnvelopeValues(id, 'ARGV[6]', 'ARGV[7]', 'ARGV[8]');

/**
 * The XADD fields of a `port.vif.plugged` entry: the port record's attributes read into `port` (an
 * HMGET of luaStoredPortAttributes), the agent's host ARGV[4].
 */
const vifPluggedFields = luaOutboxFields('port.vif.plugged', {
  ...completionEnvelope('ARGV[5]'),
  ...luaStoredPortValues('port.vif.plugged', 'port'),
  host: 'ARGV[4]',
});

/** The XADD fields of a `provisioning.complete` entry of the object ARGV[first] under event id `id`. */
const provisioningCompleteFields = luaOutboxFields('provisioning.complete', {
  ...completionEnvelope('id'),
  objectType: 'ARGV[9]',
  objectId: 'ARGV[first]',
  entity: 'ARGV[1]',
  requestId: 'ARGV[10]',
});

/**
 * KEYS: record, blocks, completion id. ARGV: entity. Returns -1 (object missing), 0 (already there),
 * 1 (added: a new provisioning round, so the last round's completion id is forgotten).
 */
export const addBlockScript: RedisScript = {
  command: 'provisioningBlockAdd',
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local added = redis.call('SADD', KEYS[2], ARGV[1])
if added == 1 then redis.call('DEL', KEYS[3]) end
return added
`,
};

/** KEYS: record, blocks (, completion id). ARGV: entity. Returns 1 when a block was removed, else 0 (never emits). */
export const removeBlockScript: RedisScript = {
  command: 'provisioningBlockRemove',
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('SREM', KEYS[2], ARGV[1])
`,
};

/** KEYS: record, blocks (, completion id). Returns 1 when the object exists and has at least one block, else 0. */
export const isBlockedScript: RedisScript = {
  command: 'provisioningBlockIsBlocked',
  readOnly: true,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SCARD', KEYS[2]) > 0 then return 1 end
return 0
`,
};

/** Completion outcomes returned by completeScript (first element of each object's reply). */
export const COMPLETION_CODES = { missing: 0, blocked: 1, emitted: 2, notBoundToHost: 3 } as const;

/**
 * As Neutron's provisioning_complete, atomically, for one or more objects of one type, optionally
 * together with the "request handled" marker of the request that reported them (duplicate
 * suppression committed with the effect).
 *
 * KEYS: outbox, handled marker (any key when unused), ports awaiting ACTIVE (sorted set), then per
 *   object its record, blocks and completion-id keys.
 * ARGV: 1 entity, 2 marker TTL seconds ('' = no marker), 3 marker value, 4 host ('' = no host check),
 *   5 id of a `port.vif.plugged` event, 6 occurredAt (of every event), 7 service, 8 instance,
 *   9 object type, 10 request id ('' = none), then per object 2 values: object id, event id.
 * The facts of a `provisioning.complete` event are appended for the objects with no block left (the
 * last one went now, or none was there, as Neutron emits again), under the id of the round's first
 * completion, kept in the completion-id key, or else the offered one, which is kept;
 * a port that got one is added to the ports awaiting ACTIVE (score: Redis time in milliseconds),
 * which the port-status subscriber leaves once it is ACTIVE (see StuckPortReconciler).
 *
 * With a marker that already exists nothing is done and {'duplicate', marker value} is returned.
 * Otherwise {'ok', per object {code, removed, ...}}: code 0 object missing (nothing stored, no event),
 * 1 blocks remain (no event), 2 event appended (third element: its id), 3 the port is not bound to `host` (ML2's
 * update_device_up check, docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): nothing changes and, for a `compute:` port, a
 * `port.vif.plugged` event's facts are appended for Nova's direct notification.
 */
export const completeScript: RedisScript = {
  command: 'provisioningComplete',
  lua: `
if ARGV[2] ~= '' then
  local seen = redis.call('GET', KEYS[2])
  if seen then return {'duplicate', seen} end
end
local results = {'ok'}
local objects = (#KEYS - 3) / 3
local clock = redis.call('TIME')
local nowMilliseconds = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for index = 1, objects do
  local record, blocks, completion = KEYS[1 + 3 * index], KEYS[2 + 3 * index], KEYS[3 + 3 * index]
  local first = 11 + (index - 1) * 2
  local result
  if redis.call('EXISTS', record) == 0 then
    result = {0, 0}
  else
    local bound = nil
    if ARGV[4] ~= '' then
      bound = cjson.decode(redis.call('HGET', record, 'binding:host_id') or '""')
    end
    if bound ~= nil and bound ~= ARGV[4] then
      local owner = cjson.decode(redis.call('HGET', record, 'device_owner') or '""')
      if string.sub(owner, 1, 8) == 'compute:' then
        local port = redis.call('HMGET', record, ${luaStoredPortAttributes('port.vif.plugged')})
        redis.call('XADD', KEYS[1], '*', ${vifPluggedFields})
      end
      result = {3, 0}
    else
      local removed = redis.call('SREM', blocks, ARGV[1])
      if redis.call('SCARD', blocks) > 0 then
        result = {1, removed}
      else
        local id = redis.call('GET', completion)
        if not id then
          id = ARGV[first + 1]
          redis.call('SET', completion, id)
        end
        redis.call('XADD', KEYS[1], '*', ${provisioningCompleteFields})
        if ARGV[9] == 'port' then redis.call('ZADD', KEYS[3], nowMilliseconds, ARGV[first]) end
        result = {2, removed, id}
      end
    end
  end
  results[#results + 1] = result
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2]) end
return results
`,
};

/** Every script of the block store, defined on its connection up front (see defineRedisScripts). */
export const BLOCK_SCRIPTS: ReadonlyArray<RedisScript> = [
  addBlockScript,
  removeBlockScript,
  isBlockedScript,
  completeScript,
];
