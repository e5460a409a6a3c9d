import type { RedisScript } from '@lifeguard/runtime';
import { luaAttributeList, luaEnvelopeValues, luaOutboxFields, luaStoredPortValues } from './outbox-xadd.ts';

/*
 * Port records are Redis hashes: one field per Port attribute (Neutron's API names, including
 * `binding:host_id`), each value JSON-encoded, plus `revision` (an integer bumped on every write),
 * so scripts read and write single attributes without re-encoding the record.
 */

/**
 * Appends ARGV[from + 1 .. from + n] (n = ARGV[from], an event's outbox fields and values, see
 * outboxFieldsOf in store/outbox-entry.ts) to outbox KEYS[k], unless n is 0.
 */
const appendEventFunction = `
local function append_event(outbox, from)
  local n = tonumber(ARGV[from] or '0')
  if n == 0 then return end
  local fields = {}
  for i = from + 1, from + n do fields[#fields + 1] = ARGV[i] end
  redis.call('XADD', outbox, '*', unpack(fields))
end
`;

/**
 * Creates (ARGV[1] = '') or updates (ARGV[1] = the revision read) a port, applies block operations
 * and appends an optional `port.status.changed` event, all at once.
 * KEYS: port, blocks, port-ids index, old MAC set, new MAC set, outbox, completion id (deleted when a
 * block is added or a status written: a new provisioning round).
 * ARGV: expected revision, port id, n, n field/value pairs, m, m (add|remove, entity) pairs, then the
 * count of the event's outbox fields and values (0 = no event) and those fields and values.
 * Returns {'ok', result of each block operation (1 changed, 0 not)} or {'exists'|'missing'|'conflict'}.
 */
export const writePortScript: RedisScript = {
  command: 'provisioningPortWrite',
  lua: `${appendEventFunction}
local exists = redis.call('EXISTS', KEYS[1]) == 1
if ARGV[1] == '' then
  if exists then return {'exists'} end
else
  if not exists then return {'missing'} end
  if redis.call('HGET', KEYS[1], 'revision') ~= ARGV[1] then return {'conflict'} end
end
local n = tonumber(ARGV[3])
if n > 0 then
  local fields = {}
  for i = 4, 3 + 2 * n do
    fields[#fields + 1] = ARGV[i]
    -- A status written through the API ends the provisioning round, as a block added does.
    if (i % 2) == 0 and ARGV[i] == 'status' then redis.call('DEL', KEYS[7]) end
  end
  redis.call('HSET', KEYS[1], unpack(fields))
end
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('ZADD', KEYS[3], 0, ARGV[2])
if KEYS[4] ~= KEYS[5] then redis.call('SREM', KEYS[4], ARGV[2]) end
redis.call('SADD', KEYS[5], ARGV[2])
local position = 4 + 2 * n
local m = tonumber(ARGV[position])
position = position + 1
local results = {'ok'}
for _ = 1, m do
  if ARGV[position] == 'add' then
    local added = redis.call('SADD', KEYS[2], ARGV[position + 1])
    if added == 1 then redis.call('DEL', KEYS[7]) end
    results[#results + 1] = added
  else
    results[#results + 1] = redis.call('SREM', KEYS[2], ARGV[position + 1])
  end
  position = position + 2
end
append_event(KEYS[6], position)
return results
`,
};

/**
 * Deletes a port and, as Neutron's foreign-key cascade, its blocks (docs/neutron-provisioning-rules.md#block-storage).
 * KEYS: port, blocks, port-ids index, MAC set, completion id. ARGV: expected revision, port id.
 * Returns {'ok', entities whose blocks were removed...} or {'missing'|'conflict'}.
 */
export const deletePortScript: RedisScript = {
  command: 'provisioningPortDelete',
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if redis.call('HGET', KEYS[1], 'revision') ~= ARGV[1] then return {'conflict'} end
local blocks = redis.call('SMEMBERS', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[5])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[2])
local result = {'ok'}
for _, entity in ipairs(blocks) do result[#result + 1] = entity end
return result
`,
};

/** Port hash fields the status scripts read, in this order (f[1] .. f[8] in the scripts). */
const STATUS_ATTRIBUTES = [
  'id',
  'device_id',
  'device_owner',
  'binding:host_id',
  'status',
  'binding:vif_type',
  'admin_state_up',
  'binding:profile',
];

/** The status scripts' HMGET argument list of STATUS_ATTRIBUTES. */
const statusFields = luaAttributeList(STATUS_ATTRIBUTES);

/**
 * Appends the facts of a `port.status.changed` event to outbox KEYS[2] (fields: store/outbox-fields.ts):
 * the port hash fields `f` as read before the change (STATUS_ATTRIBUTES; JSON as stored), the new
 * status and whether Nova hears of it ('1'/'0'). Event id, occurredAt, service and instance are ARGV[2..5].
 */
const statusEventFunction = `
local function status_event(f, status, notify)
  redis.call('XADD', KEYS[2], '*', ${luaOutboxFields('port.status.changed', {
    ...luaEnvelopeValues('ARGV[2]', 'ARGV[3]', 'ARGV[4]', 'ARGV[5]'),
    ...luaStoredPortValues('port.status.changed', 'f', STATUS_ATTRIBUTES),
    status: 'status',
    notifyNova: 'notify',
  })})
end
`;

/** KEYS and ARGV of each event in portProvisionedScript (see there). */
export const PROVISIONED_KEYS = 5;
export const PROVISIONED_VALUES = 8;

/**
 * ML2's `_port_provisioned` (docs/neutron-provisioning-rules.md#active-after-provisioning) for one or more `provisioning.complete` events (those
 * delivered together), each atomically with its status write and its de-duplication, in order, as
 * if one script ran per event.
 * KEYS, per event (PROVISIONED_KEYS): port, outbox, blocks, handled-event marker, ports awaiting ACTIVE.
 * ARGV, per event (PROVISIONED_VALUES): 1 marker TTL seconds, 2 new event id, 3 occurredAt,
 * 4 service, 5 instance, 6 trigger entity, 7 '1' on the last attempt, 8 port id.
 * The port leaves the ports awaiting ACTIVE when the outcome is missing, already_active or activated.
 * Returns per event one of: duplicate, missing, binding_failed, unbound, unbound_retry (compute port
 * seen unbound, not the last attempt: nothing recorded, try again), blocked, admin_down,
 * already_active, activated:<previous status>; or {'error', message} when a Redis command failed for
 * that event (it ends there, as its own script would; the next event still runs).
 */
export const portProvisionedScript: RedisScript = {
  command: 'provisioningPortProvisioned',
  lua: `
local function status_event(K, A, f, status, notify)
  redis.call('XADD', K[2], '*', ${luaOutboxFields('port.status.changed', {
    ...luaEnvelopeValues('A[2]', 'A[3]', 'A[4]', 'A[5]'),
    ...luaStoredPortValues('port.status.changed', 'f', STATUS_ATTRIBUTES),
    status: 'status',
    notifyNova: 'notify',
  })})
end
local function provisioned(K, A)
  if redis.call('EXISTS', K[4]) == 1 then return 'duplicate' end
  local function done(outcome)
    redis.call('SET', K[4], outcome, 'EX', A[1])
    if outcome == 'missing' or outcome == 'already_active' or string.sub(outcome, 1, 10) == 'activated:' then
      redis.call('ZREM', K[5], A[8])
    end
    return outcome
  end
  if redis.call('EXISTS', K[1]) == 0 then return done('missing') end
  local f = redis.call('HMGET', K[1], ${statusFields})
  local vif = cjson.decode(f[6] or '"unbound"')
  local owner = cjson.decode(f[3] or '""')
  if vif == 'binding_failed' then return done('binding_failed') end
  if vif == 'unbound' then
    if string.sub(owner, 1, 8) == 'compute:' and A[7] ~= '1' then return 'unbound_retry' end
    return done('unbound')
  end
  if redis.call('SCARD', K[3]) > 0 then return done('blocked') end
  if f[7] == 'false' then return done('admin_down') end
  local previous = cjson.decode(f[5] or '"DOWN"')
  if previous == 'ACTIVE' then return done('already_active') end
  local notify = '1'
  local profile = cjson.decode(f[8] or '{}')
  if type(profile) == 'table' and profile['migrating_to'] ~= nil and A[6] ~= 'L2' then notify = '0' end
  redis.call('HSET', K[1], 'status', '"ACTIVE"')
  redis.call('HINCRBY', K[1], 'revision', 1)
  status_event(K, A, f, 'ACTIVE', notify)
  return done('activated:' .. previous)
end
local replies = {}
for event = 0, #KEYS / ${PROVISIONED_KEYS} - 1 do
  local K, A = {}, {}
  for i = 1, ${PROVISIONED_KEYS} do K[i] = KEYS[event * ${PROVISIONED_KEYS} + i] end
  for i = 1, ${PROVISIONED_VALUES} do A[i] = ARGV[event * ${PROVISIONED_VALUES} + i] end
  local ran, reply = pcall(provisioned, K, A)
  if not ran then
    if type(reply) == 'table' then reply = reply.err or reply.message end
    reply = {'error', tostring(reply)}
  end
  replies[#replies + 1] = reply
end
return replies
`,
};

/**
 * ML2's update_device_down status write (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): the port goes DOWN unless the agent's
 * host is not the port's host.
 * KEYS: port, outbox, completion id (deleted when the port goes DOWN: its next completion is a new
 * transition). ARGV: 1 host ('' = no check), 2 event id, 3 occurredAt, 4 service, 5 instance.
 * Returns missing, not_bound, unchanged, or changed:<previous status>.
 */
export const portDownScript: RedisScript = {
  command: 'provisioningPortDown',
  lua: `${statusEventFunction}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local f = redis.call('HMGET', KEYS[1], ${statusFields})
if ARGV[1] ~= '' and cjson.decode(f[4] or '""') ~= ARGV[1] then return 'not_bound' end
local previous = cjson.decode(f[5] or '"DOWN"')
if previous == 'DOWN' then return 'unchanged' end
redis.call('HSET', KEYS[1], 'status', '"DOWN"')
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('DEL', KEYS[3])
status_event(f, 'DOWN', '1')
return 'changed:' .. previous
`,
};

/** Every script of the port store, defined on its connection up front (see defineRedisScripts). */
export const PORT_SCRIPTS: ReadonlyArray<RedisScript> = [
  writePortScript,
  deletePortScript,
  portProvisionedScript,
  portDownScript,
];
