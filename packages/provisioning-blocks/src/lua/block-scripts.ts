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

/** The envelope of an event completeScript appends: the Lua locals of the request being completed. */
const completionEnvelope = (id: string) => luaEnvelopeValues(id, 'occurredAt', 'service', 'instance');

/**
 * The XADD fields of a `port.vif.plugged` entry: the port record's attributes read into `port` (an
 * HMGET of luaStoredPortAttributes), the agent's host.
 */
const vifPluggedFields = luaOutboxFields('port.vif.plugged', {
  ...completionEnvelope('vifId'),
  ...luaStoredPortValues('port.vif.plugged', 'port'),
  host: 'host',
});

/** The XADD fields of a `provisioning.complete` entry of the object `objectId` under event id `id`. */
const provisioningCompleteFields = luaOutboxFields('provisioning.complete', {
  ...completionEnvelope('id'),
  objectType: 'objectType',
  objectId: 'objectId',
  entity: 'entity',
  requestId: 'requestId',
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

/** Values of each request in completeScript's ARGV before its objects' (see there). */
export const COMPLETION_REQUEST_VALUES = 9;

/**
 * As Neutron's provisioning_complete, atomically, for one or more requests (the completions of the
 * agent requests delivered together), each for one or more objects of one type, optionally together
 * with the "request handled" marker of the request that reported them (duplicate suppression
 * committed with the effect). Requests are applied in order, as if one script ran per request.
 *
 * KEYS: 1 outbox, 2 ports awaiting ACTIVE (sorted set), then per request its handled marker (any key
 *   when unused) followed by, per object, its record, blocks and completion-id keys.
 * ARGV: 1 service, 2 instance, 3 number of requests, then per request COMPLETION_REQUEST_VALUES
 *   values — entity, marker TTL seconds ('' = no marker), marker value, host ('' = no host check),
 *   id of a `port.vif.plugged` event, occurredAt (of its events), object type, request id
 *   ('' = none), number of objects n — and then n pairs: object id, offered event id.
 * The facts of a `provisioning.complete` event are appended for the objects with no block left (the
 * last one went now, or none was there, as Neutron emits again), under the id of the round's first
 * completion, kept in the completion-id key, or else the offered one, which is kept;
 * a port that got one is added to the ports awaiting ACTIVE (score: Redis time in milliseconds),
 * which the port-status subscriber leaves once it is ACTIVE (see StuckPortReconciler).
 *
 * Returns one reply per request. For a request whose marker already exists nothing is done and its
 * reply is {'duplicate', marker value}; a request a Redis command failed for (say a record that is not
 * a hash) ends there, as its own script would have, with {'error', the command's error}. Otherwise {'ok', per object {code, removed, ...}}: code 0
 * object missing (nothing stored, no event), 1 blocks remain (no event), 2 event appended (third
 * element: its id), 3 the port is not bound to the host (ML2's update_device_up check,
 * docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): nothing changes and,
 * for a `compute:` port, a `port.vif.plugged` event's facts are appended for Nova's direct
 * notification.
 */
export const completeScript: RedisScript = {
  command: 'provisioningComplete',
  lua: `
local service, instance = ARGV[1], ARGV[2]
local clock = redis.call('TIME')
local nowMilliseconds = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local function complete_object(record, blocks, completion, entity, host, vifId, occurredAt, objectType, requestId, objectId, offeredId)
  if redis.call('EXISTS', record) == 0 then return {0, 0} end
  if host ~= '' then
    local bound = cjson.decode(redis.call('HGET', record, 'binding:host_id') or '""')
    if bound ~= host then
      local owner = cjson.decode(redis.call('HGET', record, 'device_owner') or '""')
      if string.sub(owner, 1, 8) == 'compute:' then
        local port = redis.call('HMGET', record, ${luaStoredPortAttributes('port.vif.plugged')})
        redis.call('XADD', KEYS[1], '*', ${vifPluggedFields})
      end
      return {3, 0}
    end
  end
  local removed = redis.call('SREM', blocks, entity)
  if redis.call('SCARD', blocks) > 0 then return {1, removed} end
  local id = redis.call('GET', completion)
  if not id then
    id = offeredId
    redis.call('SET', completion, id)
  end
  redis.call('XADD', KEYS[1], '*', ${provisioningCompleteFields})
  if objectType == 'port' then redis.call('ZADD', KEYS[2], nowMilliseconds, objectId) end
  return {2, removed, id}
end
local replies = {}
local key, arg = 3, 4
for _ = 1, tonumber(ARGV[3]) do
  local entity, ttl, markerValue, host, vifId = ARGV[arg], ARGV[arg + 1], ARGV[arg + 2], ARGV[arg + 3], ARGV[arg + 4]
  local occurredAt, objectType, requestId = ARGV[arg + 5], ARGV[arg + 6], ARGV[arg + 7]
  local objects = tonumber(ARGV[arg + 8])
  local marker = KEYS[key]
  -- Each request runs as its own script would: an error ends it (what it wrote stays, as Redis does
  -- not roll a script back), is its reply, and the next request still runs.
  local ran, reply = pcall(function()
    local seen = false
    if ttl ~= '' then seen = redis.call('GET', marker) end
    if seen then return {'duplicate', seen} end
    local results = {'ok'}
    for index = 1, objects do
      local first = key + 1 + (index - 1) * 3
      local pair = arg + ${COMPLETION_REQUEST_VALUES} + (index - 1) * 2
      results[#results + 1] = complete_object(KEYS[first], KEYS[first + 1], KEYS[first + 2], entity, host,
        vifId, occurredAt, objectType, requestId, ARGV[pair], ARGV[pair + 1])
    end
    if ttl ~= '' then redis.call('SET', marker, markerValue, 'EX', ttl) end
    return results
  end)
  if not ran then
    if type(reply) == 'table' then reply = reply.err or reply.message end
    reply = {'error', tostring(reply)}
  end
  replies[#replies + 1] = reply
  key = key + 1 + objects * 3
  arg = arg + ${COMPLETION_REQUEST_VALUES} + objects * 2
end
return replies
`,
};

/** Every script of the block store, defined on its connection up front (see defineRedisScripts). */
export const BLOCK_SCRIPTS: ReadonlyArray<RedisScript> = [
  addBlockScript,
  removeBlockScript,
  isBlockedScript,
  completeScript,
];
