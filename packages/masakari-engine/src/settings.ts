import {
  type ConfigSource,
  environmentSource,
  type JobLockOptions,
  jobLockOptions,
  jobLockSettingsShape,
  parseConfig,
  refuseRenamedSettings,
} from '@lifeguard/runtime';
import { z } from 'zod';

/** Takeovers of one notification job before it fails (each takeover re-reads the notification). */
export const MASAKARI_ENGINE_MAX_STALLED_COUNT = 2;

/**
 * The Masakari engine's environment variables (InstanceHA's keys come from config.yaml). Durations
 * carry their unit in the name; fractions of a second are allowed where a test needs them.
 */
export const masakariEngineSettingsSchema = z.object({
  /** Notifications handled at once by this process. */
  LIFEGUARD_MASAKARI_ENGINE_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  /**
   * Seconds before a notification in `error` is tried again, once (Masakari's
   * `process_unfinished_notifications_interval`, 120 s).
   */
  LIFEGUARD_MASAKARI_RETRY_SECONDS: z.coerce.number().min(0).max(86_400).default(120),
  /** Seconds the node monitor has to judge a COMPUTE_HOST report before the notification is an `error`. */
  LIFEGUARD_MASAKARI_VERDICT_TIMEOUT_SECONDS: z.coerce.number().min(1).max(86_400).default(300),
  /** Seconds an admitted host's incident has to end (evacuated, failed, closed) before `error`. */
  LIFEGUARD_MASAKARI_RECOVERY_TIMEOUT_SECONDS: z.coerce.number().min(1).max(86_400).default(3600),
  /** Seconds an `instance-restart` job has to end before the VM notification is an `error`. */
  LIFEGUARD_MASAKARI_INSTANCE_RESTART_TIMEOUT_SECONDS: z.coerce.number().min(1).max(86_400).default(600),
  /**
   * Seconds Nova has to show a compute service disabled after a PROCESS STOPPED (Masakari's
   * `wait_period_after_service_update`, 180 s).
   */
  LIFEGUARD_MASAKARI_SERVICE_UPDATE_TIMEOUT_SECONDS: z.coerce.number().min(1).max(3600).default(180),
  /** Seconds between two looks at a verdict, an incident, a job or a compute service while waiting. */
  LIFEGUARD_MASAKARI_WATCH_SECONDS: z.coerce.number().min(0.05).max(60).default(1),
  ...jobLockSettingsShape,
});
export type MasakariEngineEnvironment = z.output<typeof masakariEngineSettingsSchema>;

/** Everything the engine reads from its environment, in milliseconds. */
export interface MasakariEngineSettings {
  readonly concurrency: number;
  readonly retryMilliseconds: number;
  readonly verdictTimeoutMilliseconds: number;
  readonly recoveryTimeoutMilliseconds: number;
  readonly instanceRestartTimeoutMilliseconds: number;
  readonly serviceUpdateTimeoutMilliseconds: number;
  readonly watchMilliseconds: number;
  readonly jobLock: JobLockOptions;
}

/**
 * Reads the engine's environment variables.
 * @throws ConfigError naming each invalid variable
 */
export function loadMasakariEngineSettings(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): MasakariEngineSettings {
  refuseRenamedSettings(sources);
  const env = parseConfig(masakariEngineSettingsSchema, sources);
  const ms = (seconds: number) => Math.round(seconds * 1000);
  return {
    concurrency: env.LIFEGUARD_MASAKARI_ENGINE_CONCURRENCY,
    retryMilliseconds: ms(env.LIFEGUARD_MASAKARI_RETRY_SECONDS),
    verdictTimeoutMilliseconds: ms(env.LIFEGUARD_MASAKARI_VERDICT_TIMEOUT_SECONDS),
    recoveryTimeoutMilliseconds: ms(env.LIFEGUARD_MASAKARI_RECOVERY_TIMEOUT_SECONDS),
    instanceRestartTimeoutMilliseconds: ms(env.LIFEGUARD_MASAKARI_INSTANCE_RESTART_TIMEOUT_SECONDS),
    serviceUpdateTimeoutMilliseconds: ms(env.LIFEGUARD_MASAKARI_SERVICE_UPDATE_TIMEOUT_SECONDS),
    watchMilliseconds: ms(env.LIFEGUARD_MASAKARI_WATCH_SECONDS),
    jobLock: jobLockOptions(env, MASAKARI_ENGINE_MAX_STALLED_COUNT),
  };
}
