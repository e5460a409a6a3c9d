import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { ConfigError, checkRedisTopology, parseConfig, runtimeConfigSchema } from '@lifeguard/runtime';
import type { DemoCloudOptions } from './demo-cloud.ts';
import { StackConfigurationError } from './errors.ts';
import type { LogFormat, WorkerLogLine } from './log-output.ts';
import type { StackRedis } from './preflight.ts';
import type { WorkerKind } from './worker-definitions.ts';

/** The simulated cloud (cloud-sim in the launcher's process, with the demo layout). */
export interface SimulatedCloudOptions extends Omit<DemoCloudOptions, 'port' | 'redfishPort'> {
  readonly kind: 'simulated';
  /** API port (Nova, Glance, Keystone, control): default 8780, or a free one with `httpPorts: 'free'`. */
  readonly port?: number;
  /** HTTPS Redfish port of the BMCs: default 8443, or a free one with `httpPorts: 'free'`. */
  readonly redfishPort?: number;
}

/** A real OpenStack cloud: no simulated piece; the operator's files are used as they are. */
export interface OpenStackCloudOptions {
  readonly kind: 'openstack';
  /** The clouds.yaml cloud name (OS_CLOUD). */
  readonly cloudName: string;
  /** InstanceHA's config.yaml (INSTANCEHA_CONFIG_PATH). */
  readonly instanceHaConfigPath: string;
  /** fencing.yaml (FENCING_CONFIG_PATH). */
  readonly fencingConfigPath: string;
  /** clouds.yaml to use (OS_CLIENT_CONFIG_FILE); default: the standard search. */
  readonly cloudsFile?: string;
}

/** What startStack starts, and how. Every field is optional. */
export interface StackOptions {
  /** The lifeguard checkout whose packages run (default: the one this package belongs to). */
  readonly repositoryRoot?: string;
  /** Where the generated files are written (default `<repositoryRoot>/.lifeguard`). */
  readonly stateDirectory?: string;
  /** RabbitMQ (default LIFEGUARD_AMQP_URL, else amqp://guest:guest@127.0.0.1:5672/). */
  readonly amqpUrl?: string;
  /** Redis (default LIFEGUARD_REDIS_URL, else redis://127.0.0.1:6379/0). */
  readonly redisUrl?: string;
  /** Redis key prefix of the deployment (default LIFEGUARD_REDIS_KEY_PREFIX, else `lifeguard`). */
  readonly keyPrefix?: string;
  /**
   * Redis through Sentinels or as a Redis Cluster, for the workers and the stack's own connections
   * (default: LIFEGUARD_REDIS_SENTINELS, LIFEGUARD_REDIS_SENTINEL_NAME, LIFEGUARD_REDIS_CLUSTER_NODES of
   * the environment): `host:port,...` lists; a cluster needs a key prefix with a {hash tag}.
   */
  readonly redisTopology?: {
    readonly sentinels?: string;
    readonly sentinelName?: string;
    readonly clusterNodes?: string;
  };
  /** How many evacuation-worker processes (default 1). */
  readonly evacuationWorkers?: number;
  /**
   * Health/metrics ports: `default` (provisioning-blocks 9410, port-status 9411, node-monitor 9402,
   * fencing-worker 9403, evacuation workers 9404, 9420, 9421, ...), `free` (chosen by the system, also
   * for cloud-sim), or a number: the first port of a consecutive range in start order.
   */
  readonly httpPorts?: 'default' | 'free' | number;
  /** Listen address of the health servers (default 127.0.0.1). */
  readonly httpHost?: string;
  /** The cloud (default: simulated). */
  readonly cloud?: SimulatedCloudOptions | OpenStackCloudOptions;
  /** InstanceHA keys written over the demo config.yaml (simulated cloud only), e.g. `{ POLL: '2' }`. */
  readonly instanceHa?: Readonly<Record<string, string>>;
  /** Variables for every worker, over everything else but the per-kind ones. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Variables for the workers of one kind, over everything else. */
  readonly workerEnvironment?: Readonly<Partial<Record<WorkerKind, Readonly<Record<string, string>>>>>;
  /** Whether workers see the launcher's environment (default true; OS_* are dropped with a simulated cloud). */
  readonly inheritEnvironment?: boolean;
  /** `dist` (default): `node packages/<w>/dist/main.js`; `source`: the TypeScript through tsx, no build needed. */
  readonly run?: 'dist' | 'source';
  /** Run `turbo run build` (cached) first (default false; `npm start` builds before it starts). */
  readonly build?: boolean;
  /** How output is shown (default `silent`; `npm start` uses `pretty`). */
  readonly logFormat?: LogFormat;
  /** Where output is shown (default standard output). */
  readonly logOutput?: Writable;
  /** Colours in pretty output (default: when the output is a terminal). */
  readonly colour?: boolean;
  /** Sees every output line of every process (and the stack's own). */
  readonly onLogLine?: (line: WorkerLogLine) => void;
  /** Seconds each worker may take to answer 200 on /readyz (default 60). */
  readonly readyTimeoutSeconds?: number;
  /**
   * Start a worker that ended unexpectedly again (default: not at all; the exit is only reported). The
   * first restart waits `firstDelaySeconds` (default 1), each further one twice as long (at most 30 s),
   * up to `attempts` restarts in a row; a worker that then runs for 60 s starts the count over. After
   * the last attempt the worker stays down, the others go on, and the stack logs an error saying so.
   */
  readonly restartWorkers?: { readonly attempts: number; readonly firstDelaySeconds?: number };
}

/** StackOptions with every default applied. */
export interface ResolvedStackOptions {
  readonly repositoryRoot: string;
  readonly stateDirectory: string;
  readonly amqpUrl: string;
  readonly redisUrl: string;
  /** The LIFEGUARD_REDIS_SENTINELS, _SENTINEL_NAME and _CLUSTER_NODES variables the workers get (those set). */
  readonly redisTopology: Readonly<Record<string, string>>;
  readonly keyPrefix: string;
  readonly evacuationWorkers: number;
  readonly httpPorts: 'default' | 'free' | number;
  readonly httpHost: string;
  readonly cloud: SimulatedCloudOptions | OpenStackCloudOptions;
  readonly instanceHa: Readonly<Record<string, string>>;
  readonly environment: Readonly<Record<string, string>>;
  readonly workerEnvironment: Readonly<Partial<Record<WorkerKind, Readonly<Record<string, string>>>>>;
  readonly inheritEnvironment: boolean;
  readonly run: 'dist' | 'source';
  readonly build: boolean;
  readonly logFormat: LogFormat;
  readonly logOutput: Writable;
  readonly colour: boolean;
  readonly onLogLine: ((line: WorkerLogLine) => void) | null;
  readonly readyTimeoutMilliseconds: number;
  /** The restart policy, or null: unexpected exits are only reported. */
  readonly restartWorkers: { readonly attempts: number; readonly firstDelayMilliseconds: number } | null;
}

/** The checkout this package lives in (packages/stack/{src,dist}/ → three levels up). */
export const PACKAGE_REPOSITORY_ROOT = resolve(import.meta.dirname, '..', '..', '..');

const KEY_PREFIX_PATTERN = /^[A-Za-z0-9{}._-]+$/;

function wholeNumber(name: string, value: number, minimum: number, maximum: number): number {
  if (!Number.isInteger(value) || value < minimum || value > maximum) {
    throw new StackConfigurationError(
      `${name} must be a whole number from ${minimum} to ${maximum}; got ${value}`,
    );
  }
  return value;
}

const REDIS_TOPOLOGY_KEYS = {
  sentinels: 'LIFEGUARD_REDIS_SENTINELS',
  sentinelName: 'LIFEGUARD_REDIS_SENTINEL_NAME',
  clusterNodes: 'LIFEGUARD_REDIS_CLUSTER_NODES',
} as const;

/**
 * The broker URLs and the Redis topology (an option first, then the environment, then lifeguard's
 * default), checked as the workers check them: an amqp(s):// URL, a redis(s):// URL whose database is
 * a whole number, `host:port` lists, and for a cluster a key prefix with a hash tag and database 0.
 * @throws StackConfigurationError naming the variable (or option) and the problem
 */
function brokerSettings(
  options: StackOptions,
  env: NodeJS.ProcessEnv,
  keyPrefix: string,
): { amqpUrl: string; redisUrl: string; redisTopology: Record<string, string> } {
  const schema = runtimeConfigSchema({ httpPort: 0 })
    .pick({
      LIFEGUARD_AMQP_URL: true,
      LIFEGUARD_REDIS_URL: true,
      LIFEGUARD_REDIS_SENTINELS: true,
      LIFEGUARD_REDIS_SENTINEL_NAME: true,
      LIFEGUARD_REDIS_CLUSTER_NODES: true,
      LIFEGUARD_REDIS_KEY_PREFIX: true,
    })
    .superRefine(checkRedisTopology);
  const fromOptions: Record<string, string | undefined> = {};
  const fromEnvironment: Record<string, string | undefined> = {};
  for (const [option, key] of Object.entries(REDIS_TOPOLOGY_KEYS)) {
    fromOptions[key] = options.redisTopology?.[option as keyof typeof REDIS_TOPOLOGY_KEYS];
    fromEnvironment[key] = options.redisTopology ? undefined : env[key] || undefined;
  }
  try {
    const settings = parseConfig(schema, [
      {
        name: 'environment',
        values: {
          LIFEGUARD_AMQP_URL: env.LIFEGUARD_AMQP_URL || undefined,
          LIFEGUARD_REDIS_URL: env.LIFEGUARD_REDIS_URL || undefined,
          ...fromEnvironment,
        },
      },
      {
        name: 'startStack options',
        values: {
          LIFEGUARD_AMQP_URL: options.amqpUrl,
          LIFEGUARD_REDIS_URL: options.redisUrl,
          LIFEGUARD_REDIS_KEY_PREFIX: keyPrefix,
          ...fromOptions,
        },
      },
    ]);
    const redisTopology: Record<string, string> = {};
    for (const key of Object.values(REDIS_TOPOLOGY_KEYS)) {
      const value =
        key === 'LIFEGUARD_REDIS_SENTINEL_NAME' ? (fromOptions[key] ?? fromEnvironment[key]) : settings[key];
      if (value) redisTopology[key] = value;
    }
    return { amqpUrl: settings.LIFEGUARD_AMQP_URL, redisUrl: settings.LIFEGUARD_REDIS_URL, redisTopology };
  } catch (error) {
    if (error instanceof ConfigError) throw new StackConfigurationError(error.message);
    throw error;
  }
}

/**
 * Applies the defaults (environment variables first, then lifeguard's) and checks the values.
 * @throws StackConfigurationError naming the option
 */
export function resolveStackOptions(
  options: StackOptions,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedStackOptions {
  const repositoryRoot = resolve(options.repositoryRoot ?? PACKAGE_REPOSITORY_ROOT);
  const keyPrefix = options.keyPrefix ?? (env.LIFEGUARD_REDIS_KEY_PREFIX || 'lifeguard');
  if (!KEY_PREFIX_PATTERN.test(keyPrefix)) {
    throw new StackConfigurationError(
      `keyPrefix "${keyPrefix}" may hold letters, digits, ".", "_", "-" and a {hash tag}`,
    );
  }
  const httpPorts = options.httpPorts ?? 'default';
  if (typeof httpPorts === 'number') wholeNumber('httpPorts', httpPorts, 1, 65000);
  const cloud = options.cloud ?? { kind: 'simulated' };
  if (cloud.kind === 'openstack') {
    if (!cloud.cloudName) throw new StackConfigurationError('an OpenStack cloud needs its name (OS_CLOUD)');
    for (const [name, path] of [
      ['config.yaml (INSTANCEHA_CONFIG_PATH)', cloud.instanceHaConfigPath],
      ['fencing.yaml (FENCING_CONFIG_PATH)', cloud.fencingConfigPath],
    ] as const) {
      if (!path) {
        throw new StackConfigurationError(
          `with OS_CLOUD=${cloud.cloudName} the stack runs against that cloud and needs your ${name}`,
        );
      }
      if (!existsSync(path)) throw new StackConfigurationError(`${name}: ${path} does not exist`);
    }
  } else {
    for (const [name, value] of [
      ['port', cloud.port],
      ['redfishPort', cloud.redfishPort],
    ] as const) {
      if (value !== undefined) wholeNumber(`cloud.${name}`, value, 0, 65535);
    }
    if (cloud.hosts !== undefined) wholeNumber('cloud.hosts', cloud.hosts, 1, 1000);
  }
  const logOutput = options.logOutput ?? process.stdout;
  return {
    repositoryRoot,
    stateDirectory: resolve(options.stateDirectory ?? resolve(repositoryRoot, '.lifeguard')),
    ...brokerSettings(options, env, keyPrefix),
    keyPrefix,
    evacuationWorkers: wholeNumber('evacuationWorkers', options.evacuationWorkers ?? 1, 1, 32),
    httpPorts,
    httpHost: options.httpHost ?? '127.0.0.1',
    cloud,
    instanceHa: options.instanceHa ?? {},
    environment: options.environment ?? {},
    workerEnvironment: options.workerEnvironment ?? {},
    inheritEnvironment: options.inheritEnvironment ?? true,
    run: options.run ?? 'dist',
    build: options.build ?? false,
    logFormat: options.logFormat ?? 'silent',
    logOutput,
    colour: options.colour ?? ('isTTY' in logOutput && logOutput.isTTY === true),
    onLogLine: options.onLogLine ?? null,
    readyTimeoutMilliseconds: (options.readyTimeoutSeconds ?? 60) * 1000,
    restartWorkers: options.restartWorkers
      ? {
          attempts: wholeNumber('restartWorkers.attempts', options.restartWorkers.attempts, 1, 1000),
          firstDelayMilliseconds: (options.restartWorkers.firstDelaySeconds ?? 1) * 1000,
        }
      : null,
  };
}

/** Where the stack's own Redis connections go: the URL, the Sentinels or cluster nodes, the key prefix. */
export function stackRedis(
  options: Pick<ResolvedStackOptions, 'redisUrl' | 'redisTopology' | 'keyPrefix'>,
): StackRedis {
  return { url: options.redisUrl, topology: options.redisTopology, keyPrefix: options.keyPrefix };
}
