import { hostname } from 'node:os';
import { type ConfigSource, environmentSource, parseConfig } from '@lifeguard/runtime';
import { z } from 'zod';

/** The instance monitor's environment variables. */
export const instanceMonitorSettingsSchema = z.object({
  /** The libvirt connection URI to watch (Nova's libvirt driver uses `qemu:///system`). */
  LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI: z.string().min(1).default('qemu:///system'),
  /** The compute host's name as Nova knows it; default this machine's host name, as Masakari's monitor. */
  LIFEGUARD_INSTANCE_MONITOR_HOST: z.string().min(1).max(255).optional(),
  /** The virsh program (Debian package libvirt-clients). */
  LIFEGUARD_INSTANCE_MONITOR_VIRSH: z.string().min(1).default('virsh'),
});

export interface InstanceMonitorSettings {
  readonly uri: string;
  readonly host: string;
  readonly virsh: string;
}

/**
 * Reads the instance monitor's environment variables.
 * @throws ConfigError naming each invalid variable
 */
export function loadInstanceMonitorSettings(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): InstanceMonitorSettings {
  const env = parseConfig(instanceMonitorSettingsSchema, sources);
  return {
    uri: env.LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI,
    host: env.LIFEGUARD_INSTANCE_MONITOR_HOST ?? hostname(),
    virsh: env.LIFEGUARD_INSTANCE_MONITOR_VIRSH,
  };
}
