import type { RedisScript } from '@lifeguard/runtime';

/**
 * Agents are Redis hashes keyed by `(agent_type, host)`: `id`, `admin_state_up` ('true'/'false'),
 * `created_at`, `started_at`, `heartbeat_timestamp` (ISO 8601, the server's time),
 * `heartbeat_milliseconds`, `state` (JSON: agent_type, binary, host, topic, configurations),
 * `availability_zone` (JSON) and `resource_versions` (JSON).
 */

/**
 * Neutron's create_or_update_agent (docs/neutron-provisioning-rules.md#report_state), atomically. The agent is alive when its last
 * heartbeat is not older than the down time; a report from an agent that was not alive revives it.
 * KEYS: agent hash, agent index set.
 * ARGV: 1 now ISO, 2 now milliseconds, 3 down time milliseconds, 4 id for a new agent,
 * 5 admin_state_up for a new agent ('true'/'false'), 6 start_flag ('1'/'0'), 7 state JSON,
 * 8 resource_versions JSON or '', 9 availability_zone JSON or '' (not reported), 10 index member.
 * Returns 'new', 'alive' or 'revived'.
 */
export const reportStateScript: RedisScript = {
  command: 'provisioningAgentReportState',
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'id', ARGV[4], 'admin_state_up', ARGV[5], 'created_at', ARGV[1],
    'started_at', ARGV[1], 'heartbeat_timestamp', ARGV[1], 'heartbeat_milliseconds', ARGV[2],
    'state', ARGV[7], 'resource_versions', ARGV[8] ~= '' and ARGV[8] or '{}',
    'availability_zone', ARGV[9] ~= '' and ARGV[9] or 'null')
  redis.call('SADD', KEYS[2], ARGV[10])
  return 'new'
end
local last = tonumber(redis.call('HGET', KEYS[1], 'heartbeat_milliseconds') or '0')
local status = 'alive'
if tonumber(ARGV[2]) - last > tonumber(ARGV[3]) then status = 'revived' end
redis.call('HSET', KEYS[1], 'heartbeat_timestamp', ARGV[1], 'heartbeat_milliseconds', ARGV[2], 'state', ARGV[7])
if ARGV[6] == '1' then redis.call('HSET', KEYS[1], 'started_at', ARGV[1]) end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'resource_versions', ARGV[8]) end
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'availability_zone', ARGV[9]) end
return status
`,
};

/**
 * Binds a DHCP agent (by host) to a network when the network exists and a DHCP agent is registered
 * on that host. KEYS: network record, DHCP agent hash, network's agent set, host's network set.
 * ARGV: host, network id. Returns 'ok', 'no-network' or 'no-agent'.
 */
export const bindDhcpAgentScript: RedisScript = {
  command: 'provisioningDhcpAgentBind',
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no-network' end
if redis.call('EXISTS', KEYS[2]) == 0 then return 'no-agent' end
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[2])
return 'ok'
`,
};
