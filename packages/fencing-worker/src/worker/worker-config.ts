import {
  type InstanceHaConfig,
  type LoadedInstanceHaConfig,
  loadInstanceHaConfig,
} from '@lifeguard/instance-ha';
import {
  booleanSetting,
  type ConfigSource,
  environmentSource,
  jobLockSettingsShape,
  parseConfig,
  refuseRenamedSettings,
} from '@lifeguard/runtime';
import { z } from 'zod';
import { type FencingConfiguration, loadFencingConfig } from '../configuration/fencing-config.ts';

/** Takeovers of one fence job from a dead worker before it fails (each re-checks the host first). */
export const FENCING_MAX_STALLED_COUNT = 5;

/** Where InstanceHA reads fencing.yaml (docs/instance-ha-rules.md#environment); FENCING_CONFIG_PATH overrides it. */
export const DEFAULT_FENCING_CONFIG_PATH = '/secrets/fencing.yaml';

/** The fencing worker's own environment variables (config.yaml keys are read by @lifeguard/instance-ha). */
export const fencingWorkerSchema = z.object({
  /** fencing.yaml, InstanceHA's variable and default path. */
  FENCING_CONFIG_PATH: z.string().min(1).default(DEFAULT_FENCING_CONFIG_PATH),
  /** Accept BMC addresses on loopback (test beds and the simulated cloud run BMCs on 127.0.0.1). */
  LIFEGUARD_FENCING_ALLOW_LOOPBACK: booleanSetting.default(false),
  /** Accept `agent: noop`, which reports success without fencing (tests and demos only). */
  LIFEGUARD_FENCING_ALLOW_NOOP: booleanSetting.default(false),
  /** Directory of the fence-agents programs named by `agent: fence_<name>`. */
  LIFEGUARD_FENCE_AGENTS_DIRECTORY: z.string().min(1).default('/usr/sbin'),
  /** The ipmitool program of the `ipmi` method. */
  LIFEGUARD_IPMITOOL_PATH: z.string().min(1).default('/usr/bin/ipmitool'),
  /** BullMQ `attempts` of a fence job: tries of the whole job before it fails for good. */
  LIFEGUARD_FENCING_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /** First wait before retrying a failed fence job, in seconds (doubled per attempt for transient errors). */
  LIFEGUARD_FENCING_BACKOFF_SECONDS: z.coerce.number().min(0).max(3600).default(10),
  /** Longest wait between two attempts of a fence job, in seconds. */
  LIFEGUARD_FENCING_MAX_BACKOFF_SECONDS: z.coerce.number().min(0).max(86_400).default(300),
  /** Jobs run at once by this process; default config.yaml WORKERS (hosts processed concurrently). */
  LIFEGUARD_FENCING_CONCURRENCY: z.coerce.number().int().min(1).max(100).optional(),
  /** BullMQ job lock, stalled-job check and takeovers: the same settings as the evacuation worker's. */
  ...jobLockSettingsShape,
  /** Seconds between two looks at failed fence jobs (operator confirmations, retries that are due). */
  LIFEGUARD_FENCING_RECONCILE_SECONDS: z.coerce.number().min(0.1).max(3600).default(15),
  /** Retry a fence job that failed for a reason a retry can fix this many seconds later; 0: never. */
  LIFEGUARD_FENCING_RETRY_FAILED_AFTER_SECONDS: z.coerce.number().min(0).max(86_400).default(300),
});

export type FencingWorkerSettings = z.output<typeof fencingWorkerSchema>;

/** Everything the fencing worker is configured with. */
export interface FencingWorkerConfig {
  readonly settings: FencingWorkerSettings;
  readonly instanceHa: LoadedInstanceHaConfig;
  readonly fencing: FencingConfiguration;
  /** Jobs run at once. */
  readonly concurrency: number;
}

/**
 * Reads the worker's environment, InstanceHA's config.yaml (FENCING_TIMEOUT, CHECK_KDUMP,
 * KDUMP_TIMEOUT, DISABLED, WORKERS, SSL_*) and fencing.yaml.
 * @throws ConfigError naming the first invalid key of any of them
 */
export function loadFencingWorkerConfig(env: NodeJS.ProcessEnv = process.env): FencingWorkerConfig {
  const sources: ConfigSource[] = [environmentSource(env)];
  refuseRenamedSettings(sources);
  const settings = parseConfig(fencingWorkerSchema, sources);
  const instanceHa = loadInstanceHaConfig({ env });
  const fencing = loadFencingConfig(
    settings.FENCING_CONFIG_PATH,
    fencingOptions(settings, instanceHa.config),
  );
  return {
    settings,
    instanceHa,
    fencing,
    concurrency: settings.LIFEGUARD_FENCING_CONCURRENCY ?? instanceHa.config.workers,
  };
}

/** How fencing.yaml is read, from the worker's settings and config.yaml. */
export function fencingOptions(settings: FencingWorkerSettings, config: InstanceHaConfig) {
  return {
    defaultTimeoutSeconds: config.fencingTimeoutSeconds,
    allowLoopback: settings.LIFEGUARD_FENCING_ALLOW_LOOPBACK,
    allowNoop: settings.LIFEGUARD_FENCING_ALLOW_NOOP,
    tls: {
      verify: config.sslVerify,
      caBundlePath: config.sslCaBundle,
      certificatePath: config.sslCertPath,
      keyPath: config.sslKeyPath,
    },
    fenceAgentsDirectory: settings.LIFEGUARD_FENCE_AGENTS_DIRECTORY,
  };
}
