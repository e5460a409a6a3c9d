import type { OwnVariables } from '@lifeguard/runtime';
import { instanceMonitorSettingsSchema } from './monitor/monitor-settings.ts';
import { instanceRestartSettingsSchema } from './settings.ts';

const PREFIXES = ['LIFEGUARD_INSTANCE_RESTART_', 'LIFEGUARD_INSTANCE_MONITOR_'];

/**
 * Every `LIFEGUARD_INSTANCE_RESTART_*` and `LIFEGUARD_INSTANCE_MONITOR_*` variable the instance
 * restart worker and lifeguard-instance-monitor read: any other set under those prefixes is named at
 * start-up by both, with the one it most likely misspells (`LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL`:
 * did you mean `LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI`?).
 */
export const INSTANCE_RESTART_VARIABLES: OwnVariables = {
  prefixes: PREFIXES,
  known: [
    ...Object.keys(instanceRestartSettingsSchema.shape),
    ...Object.keys(instanceMonitorSettingsSchema.shape),
  ].filter((name) => PREFIXES.some((prefix) => name.startsWith(prefix))),
};
