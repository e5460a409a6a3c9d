import { type OwnVariables, ownVariablesOf } from '@lifeguard/runtime';
import { instanceMonitorSettingsSchema } from './monitor/monitor-settings.ts';
import { instanceRestartSettingsSchema } from './settings.ts';

/**
 * Every `LIFEGUARD_INSTANCE_RESTART_*` and `LIFEGUARD_INSTANCE_MONITOR_*` variable the instance
 * restart worker and lifeguard-instance-monitor read: any other set under those prefixes is named at
 * start-up by both, with the one it most likely misspells (`LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URL`:
 * did you mean `LIFEGUARD_INSTANCE_MONITOR_LIBVIRT_URI`?).
 */
export const INSTANCE_RESTART_VARIABLES: OwnVariables = ownVariablesOf(
  ['LIFEGUARD_INSTANCE_RESTART_', 'LIFEGUARD_INSTANCE_MONITOR_'],
  instanceRestartSettingsSchema,
  instanceMonitorSettingsSchema,
);
