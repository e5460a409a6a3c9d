import { type ConfigSource, environmentSource, parseConfig } from '@lifeguard/runtime';
import { z } from 'zod';

/**
 * node-monitor's own environment variables (InstanceHA's keys come from config.yaml, see
 * loadInstanceHaConfig; the cloud from clouds.yaml / OS_CLOUD / OS_*, see the openstack package).
 */
export const nodeMonitorSettingsSchema = z.object({
  /** Leader lease time to live, in seconds: a standby takes over at most this long after the leader dies. */
  LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: z.coerce.number().min(0.5).max(300).default(15),
  /** Address the fence_kdump listener binds (CHECK_KDUMP); `::` listens on IPv6 and IPv4. */
  LIFEGUARD_KDUMP_LISTEN_ADDRESS: z.string().min(1).default('::'),
  /** Address the heartbeat listener binds (CHECK_HEARTBEAT). */
  LIFEGUARD_HEARTBEAT_LISTEN_ADDRESS: z.string().min(1).default('::'),
  /** File with the current heartbeat HMAC key, hex-encoded (InstanceHA's variable). */
  HEARTBEAT_HMAC_KEY_PATH: z.string().optional(),
  /** File with the previous heartbeat HMAC key during a rotation (InstanceHA's variable). */
  HEARTBEAT_HMAC_KEY_PREVIOUS_PATH: z.string().optional(),
});

export type NodeMonitorSettings = z.output<typeof nodeMonitorSettingsSchema>;

/** @throws ConfigError naming each invalid variable */
export function loadNodeMonitorSettings(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): NodeMonitorSettings {
  return parseConfig(nodeMonitorSettingsSchema, sources);
}
