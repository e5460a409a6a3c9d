import { LuaScript } from '../store/lua-script.ts';

/*
 * Port records are Redis hashes: one field per Port attribute (Neutron's API names, including
 * `binding:host_id`), each value JSON-encoded, plus `revision` (an integer bumped on every write),
 * so scripts read and write single attributes without re-encoding the record.
 */

/** Appends ARGV[from..from+4] (id, type, routingKey, occurredAt, JSON) to outbox KEYS[k], unless ARGV[from] is ''. */
const appendEventFunction = `
local function append_event(outbox, from)
  if ARGV[from] == nil or ARGV[from] == '' then return end
  redis.call('XADD', outbox, '*', 'id', ARGV[from], 'type', ARGV[from + 1], 'routingKey', ARGV[from + 2],
    'occurredAt', ARGV[from + 3], 'event', ARGV[from + 4])
end
`;

/**
 * Creates (ARGV[1] = '') or updates (ARGV[1] = the revision read) a port, applies block operations
 * and appends an optional `port.status.changed` event, all at once.
 * KEYS: port, blocks, port-ids index, old MAC set, new MAC set, outbox.
 * ARGV: expected revision, port id, n, n field/value pairs, m, m (add|remove, entity) pairs, then the
 * event's 5 fields or ''.
 * Returns {'ok', result of each block operation (1 changed, 0 not)} or {'exists'|'missing'|'conflict'}.
 */
export const writePortScript = new LuaScript(
  'provisioning-port-write',
  `${appendEventFunction}
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
  for i = 4, 3 + 2 * n do fields[#fields + 1] = ARGV[i] end
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
    results[#results + 1] = redis.call('SADD', KEYS[2], ARGV[position + 1])
  else
    results[#results + 1] = redis.call('SREM', KEYS[2], ARGV[position + 1])
  end
  position = position + 2
end
append_event(KEYS[6], position)
return results
`,
);

/**
 * Deletes a port and, as Neutron's foreign-key cascade, its blocks (docs/neutron-provisioning-rules.md#block-storage).
 * KEYS: port, blocks, port-ids index, MAC set. ARGV: expected revision, port id.
 * Returns {'ok', entities whose blocks were removed...} or {'missing'|'conflict'}.
 */
export const deletePortScript = new LuaScript(
  'provisioning-port-delete',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if redis.call('HGET', KEYS[1], 'revision') ~= ARGV[1] then return {'conflict'} end
local blocks = redis.call('SMEMBERS', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[2])
local result = {'ok'}
for _, entity in ipairs(blocks) do result[#result + 1] = entity end
return result
`,
);

/** Builds the JSON of a `port.status.changed` event from the port hash fields `f` (see statusFields). */
const statusEventFunction = `
local function status_event(f, previous, status, notify)
  local event = {
    id = ARGV[2], schemaVersion = 1, occurredAt = ARGV[3],
    source = { service = ARGV[4], instance = ARGV[5] },
    type = 'port.status.changed',
    data = {
      portId = cjson.decode(f[1]), previousStatus = previous, status = status,
      deviceId = cjson.decode(f[2] or '""'), deviceOwner = cjson.decode(f[3] or '""'),
      host = cjson.decode(f[4] or '""'), notifyNova = notify
    }
  }
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[2], 'type', 'port.status.changed',
    'routingKey', 'port.status.changed', 'occurredAt', ARGV[3], 'event', cjson.encode(event))
end
`;

/** Port hash fields the status scripts read, in this order. */
const statusFields = `'id', 'device_id', 'device_owner', 'binding:host_id', 'status', 'binding:vif_type', 'admin_state_up', 'binding:profile'`;

/**
 * ML2's `_port_provisioned` (docs/neutron-provisioning-rules.md#active-after-provisioning) for one `provisioning.complete` event, atomically with
 * the status write and the event de-duplication.
 * KEYS: port, outbox, blocks, handled-event marker, ports awaiting ACTIVE.
 * ARGV: 1 marker TTL seconds, 2 new event id, 3 occurredAt, 4 service, 5 instance, 6 trigger
 * entity, 7 '1' on the last attempt, 8 port id.
 * The port leaves the ports awaiting ACTIVE when the outcome is missing, already_active or activated.
 * Returns one of: duplicate, missing, binding_failed, unbound, unbound_retry (compute port seen
 * unbound, not the last attempt: nothing recorded, try again), blocked, admin_down, already_active,
 * activated:<previous status>.
 */
export const portProvisionedScript = new LuaScript(
  'provisioning-port-provisioned',
  `${statusEventFunction}
if redis.call('EXISTS', KEYS[4]) == 1 then return 'duplicate' end
local function done(outcome)
  redis.call('SET', KEYS[4], outcome, 'EX', ARGV[1])
  if outcome == 'missing' or outcome == 'already_active' or string.sub(outcome, 1, 10) == 'activated:' then
    redis.call('ZREM', KEYS[5], ARGV[8])
  end
  return outcome
end
if redis.call('EXISTS', KEYS[1]) == 0 then return done('missing') end
local f = redis.call('HMGET', KEYS[1], ${statusFields})
local vif = cjson.decode(f[6] or '"unbound"')
local owner = cjson.decode(f[3] or '""')
if vif == 'binding_failed' then return done('binding_failed') end
if vif == 'unbound' then
  if string.sub(owner, 1, 8) == 'compute:' and ARGV[7] ~= '1' then return 'unbound_retry' end
  return done('unbound')
end
if redis.call('SCARD', KEYS[3]) > 0 then return done('blocked') end
if f[7] == 'false' then return done('admin_down') end
local previous = cjson.decode(f[5] or '"DOWN"')
if previous == 'ACTIVE' then return done('already_active') end
local notify = true
local profile = cjson.decode(f[8] or '{}')
if type(profile) == 'table' and profile['migrating_to'] ~= nil and ARGV[6] ~= 'L2' then notify = false end
redis.call('HSET', KEYS[1], 'status', '"ACTIVE"')
redis.call('HINCRBY', KEYS[1], 'revision', 1)
status_event(f, previous, 'ACTIVE', notify)
return done('activated:' .. previous)
`,
);

/**
 * ML2's update_device_down status write (docs/neutron-provisioning-rules.md#update_device_up-and-update_device_down): the port goes DOWN unless the agent's
 * host is not the port's host.
 * KEYS: port, outbox. ARGV: 1 host ('' = no check), 2 event id, 3 occurredAt, 4 service, 5 instance.
 * Returns missing, not_bound, unchanged, or changed:<previous status>.
 */
export const portDownScript = new LuaScript(
  'provisioning-port-down',
  `${statusEventFunction}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local f = redis.call('HMGET', KEYS[1], ${statusFields})
if ARGV[1] ~= '' and cjson.decode(f[4] or '""') ~= ARGV[1] then return 'not_bound' end
local previous = cjson.decode(f[5] or '"DOWN"')
if previous == 'DOWN' then return 'unchanged' end
redis.call('HSET', KEYS[1], 'status', '"DOWN"')
redis.call('HINCRBY', KEYS[1], 'revision', 1)
status_event(f, previous, 'DOWN', true)
return 'changed:' .. previous
`,
);
