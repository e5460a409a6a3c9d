import {
  booleanSetting,
  type ConfigSource,
  environmentSource,
  type JobLockOptions,
  jobLockOptions,
  jobLockSettingsShape,
  parseConfig,
} from '@lifeguard/runtime';
import { z } from 'zod';
import type { InstanceRestartSettings } from './policy/instance-restart-decision.ts';

/** Takeovers of one restart job before it fails (each takeover reads the server again first). */
export const INSTANCE_RESTART_MAX_STALLED_COUNT = 2;

/**
 * The instance restart worker's environment variables. Masakari's option each one follows is named;
 * the defaults are Masakari's.
 */
export const instanceRestartSettingsSchema = z.object({
  /** `[instance_failure] process_all_instances`: restart every instance, not only HA_Enabled ones. */
  LIFEGUARD_INSTANCE_RESTART_PROCESS_ALL_INSTANCES: booleanSetting.default(false),
  /** `[instance_failure] ha_enabled_instance_metadata_key`. */
  LIFEGUARD_INSTANCE_RESTART_HA_ENABLED_METADATA_KEY: z.string().min(1).max(255).default('HA_Enabled'),
  /** `[host_failure] ignore_instances_in_error_state`, applied to instance failures. */
  LIFEGUARD_INSTANCE_RESTART_IGNORE_ERROR_STATE: booleanSetting.default(false),
  /** Restarts of one instance that may begin within an hour; beyond, the worker gives up and alerts. */
  LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOUR: z.coerce.number().int().min(1).max(100).default(3),
  /** `wait_period_after_power_off`: seconds for the server to be SHUTOFF after the stop. */
  LIFEGUARD_INSTANCE_RESTART_STOP_TIMEOUT_SECONDS: z.coerce.number().min(1).max(3600).default(180),
  /** `wait_period_after_power_on`: seconds for the server to be ACTIVE after the start. */
  LIFEGUARD_INSTANCE_RESTART_START_TIMEOUT_SECONDS: z.coerce.number().min(1).max(3600).default(60),
  /** `verify_interval`: seconds between two looks at the server while waiting. */
  LIFEGUARD_INSTANCE_RESTART_POLL_SECONDS: z.coerce.number().min(0.05).max(60).default(1),
  /** Restart jobs run at once by this process. */
  LIFEGUARD_INSTANCE_RESTART_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  ...jobLockSettingsShape,
});
export type InstanceRestartEnvironment = z.output<typeof instanceRestartSettingsSchema>;

/** Everything the worker needs to know: the rule's settings, the waits, BullMQ's options. */
export interface InstanceRestartWorkerSettings {
  readonly rule: InstanceRestartSettings;
  readonly stopTimeoutMilliseconds: number;
  readonly startTimeoutMilliseconds: number;
  readonly pollMilliseconds: number;
  readonly concurrency: number;
  readonly jobLock: JobLockOptions;
}

/**
 * Reads the worker's environment variables.
 * @throws ConfigError naming each invalid variable
 */
export function loadInstanceRestartSettings(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): InstanceRestartWorkerSettings {
  const env = parseConfig(instanceRestartSettingsSchema, sources);
  return {
    rule: {
      processAllInstances: env.LIFEGUARD_INSTANCE_RESTART_PROCESS_ALL_INSTANCES,
      haEnabledMetadataKey: env.LIFEGUARD_INSTANCE_RESTART_HA_ENABLED_METADATA_KEY,
      ignoreInstancesInErrorState: env.LIFEGUARD_INSTANCE_RESTART_IGNORE_ERROR_STATE,
      maxRestartsPerHour: env.LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOUR,
    },
    stopTimeoutMilliseconds: Math.round(env.LIFEGUARD_INSTANCE_RESTART_STOP_TIMEOUT_SECONDS * 1000),
    startTimeoutMilliseconds: Math.round(env.LIFEGUARD_INSTANCE_RESTART_START_TIMEOUT_SECONDS * 1000),
    pollMilliseconds: Math.round(env.LIFEGUARD_INSTANCE_RESTART_POLL_SECONDS * 1000),
    concurrency: env.LIFEGUARD_INSTANCE_RESTART_CONCURRENCY,
    jobLock: jobLockOptions(env, INSTANCE_RESTART_MAX_STALLED_COUNT),
  };
}
