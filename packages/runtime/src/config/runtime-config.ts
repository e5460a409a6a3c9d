import { hostname } from 'node:os';
import { z } from 'zod';
import { amqpUrlListSetting } from '../amqp/broker-addresses.ts';
import {
  keyPrefixHashTag,
  REDIS_CLUSTER_DATABASE_PROBLEM,
  REDIS_CLUSTER_PREFIX_PROBLEM,
} from '../redis/redis-client.ts';
import { REDIS_DATABASE_PROBLEM, redisDatabaseIndex } from '../redis/redis-refusal.ts';
import { booleanSetting } from './boolean-setting.ts';
import { type ConfigSource, environmentSource, parseConfig } from './parse-config.ts';
import { TLS_FILE_KEYS, tlsFileProblem } from './tls-files.ts';

/** A PEM file path that must be readable at start-up. */
const tlsFile = z
  .string()
  .min(1)
  .superRefine((path, context) => {
    const problem = tlsFileProblem(path);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .optional();

/** `host:port[,host:port...]`, as LIFEGUARD_REDIS_SENTINELS and LIFEGUARD_REDIS_CLUSTER_NODES take it. */
const redisNodeList = z
  .string()
  .regex(/^([^,:\s]+:\d+)(,[^,:\s]+:\d+)*$/, 'must be host:port[,host:port...]')
  .optional();

/**
 * Environment variables every lifeguard process reads. Per-worker defaults (such as the HTTP port)
 * are passed in by the worker. The settings that must agree with each other are checked by
 * checkRedisTopology, which loadRuntimeConfig adds.
 */
/**
 * An empty variable counts as unset, so its default applies (`${LIFEGUARD_REDIS_URL:-}` in a Compose
 * file passes an empty string).
 */
const emptyAsUnset = (value: unknown) => (value === '' ? undefined : value);

export function runtimeConfigSchema(defaults: { httpPort: number }) {
  return z.object({
    /**
     * AMQP URL of RabbitMQ, with credentials and vhost; for a cluster, every node's URL
     * comma-separated, or oslo's `rabbit://user:pass@h1:5672,user:pass@h2:5672/vhost`, tried in turn
     * (parseAmqpUrlList). Logged with passwords masked.
     */
    LIFEGUARD_AMQP_URL: z.preprocess(
      emptyAsUnset,
      amqpUrlListSetting.default('amqp://guest:guest@127.0.0.1:5672/'),
    ),
    /**
     * Redis URL (`redis://[[user]:password@]host:port/db` or `rediss://` for TLS); `db`, the
     * database index, is a whole number from 0 (none: 0).
     */
    LIFEGUARD_REDIS_URL: z.preprocess(
      emptyAsUnset,
      z
        .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL', abort: true })
        .refine((url) => redisDatabaseIndex(url) !== null, REDIS_DATABASE_PROBLEM)
        .default('redis://127.0.0.1:6379/0'),
    ),
    /** PEM file of the CA(s) that sign RabbitMQ's certificate, for an `amqps://` LIFEGUARD_AMQP_URL. */
    [TLS_FILE_KEYS.amqp.ca]: tlsFile,
    /** PEM client certificate for RabbitMQ (`ssl_options.verify = verify_peer`); needs the key. */
    [TLS_FILE_KEYS.amqp.cert]: tlsFile,
    /** PEM private key of LIFEGUARD_AMQP_TLS_CERT_FILE (unencrypted). */
    [TLS_FILE_KEYS.amqp.key]: tlsFile,
    /** PEM file of the CA(s) that sign Redis's certificate, for a `rediss://` LIFEGUARD_REDIS_URL. */
    [TLS_FILE_KEYS.redis.ca]: tlsFile,
    /** PEM client certificate for Redis (`tls-auth-clients yes`); needs the key. */
    [TLS_FILE_KEYS.redis.cert]: tlsFile,
    /** PEM private key of LIFEGUARD_REDIS_TLS_CERT_FILE (unencrypted). */
    [TLS_FILE_KEYS.redis.key]: tlsFile,
    /** Comma-separated `host:port` list of Redis Sentinels; when set, LIFEGUARD_REDIS_SENTINEL_NAME is used. */
    LIFEGUARD_REDIS_SENTINELS: redisNodeList,
    /** Sentinel master group name. */
    LIFEGUARD_REDIS_SENTINEL_NAME: z.string().min(1).default('mymaster'),
    /**
     * Comma-separated `host:port` list of Redis Cluster nodes to start from (some or all of the
     * cluster's masters and replicas); when set, lifeguard uses a Redis Cluster client.
     */
    LIFEGUARD_REDIS_CLUSTER_NODES: redisNodeList,
    /** Prefix of every Redis key lifeguard writes, so several deployments can share one Redis. */
    LIFEGUARD_REDIS_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9{}._-]+$/, 'may hold letters, digits, ".", "_", "-" and a {hash tag}')
      .default('lifeguard'),
    /** Address of the health and metrics HTTP server. */
    LIFEGUARD_HTTP_HOST: z.string().min(1).default('127.0.0.1'),
    /** Port of the health and metrics HTTP server; 0 picks a free port. */
    LIFEGUARD_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(defaults.httpPort),
    LIFEGUARD_LOG_LEVEL: z
      .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      .default('info'),
    /** Human-readable logs (pino-pretty) instead of JSON lines. */
    LIFEGUARD_LOG_PRETTY: booleanSetting.default(false),
    /** Time budget of a graceful shutdown, in seconds, after which the process exits anyway. */
    LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(25),
    /** Name of this process instance in logs, events and leases (default `<hostname>:<pid>`). */
    LIFEGUARD_INSTANCE_NAME: z.string().min(1).default(`${hostname()}:${process.pid}`),
  });
}

/**
 * The Redis settings that only make sense together: with LIFEGUARD_REDIS_CLUSTER_NODES the key prefix
 * must hold a hash tag, the URL's database must be 0 and LIFEGUARD_REDIS_SENTINELS must be unset
 * (docs/operations.md#53-redis). Each problem is reported under the key to change. Added to a
 * schema with `.superRefine(checkRedisTopology)` after any `.extend`/`.pick` (zod refuses `.pick` on a
 * refined object).
 */
export function checkRedisTopology(
  config: Pick<
    RuntimeConfig,
    | 'LIFEGUARD_REDIS_CLUSTER_NODES'
    | 'LIFEGUARD_REDIS_KEY_PREFIX'
    | 'LIFEGUARD_REDIS_URL'
    | 'LIFEGUARD_REDIS_SENTINELS'
  >,
  context: z.RefinementCtx,
): void {
  if (!config.LIFEGUARD_REDIS_CLUSTER_NODES) return;
  if (keyPrefixHashTag(config.LIFEGUARD_REDIS_KEY_PREFIX) === null)
    context.addIssue({
      code: 'custom',
      path: ['LIFEGUARD_REDIS_KEY_PREFIX'],
      message: REDIS_CLUSTER_PREFIX_PROBLEM,
    });
  if (redisDatabaseIndex(config.LIFEGUARD_REDIS_URL) !== 0)
    context.addIssue({
      code: 'custom',
      path: ['LIFEGUARD_REDIS_URL'],
      message: REDIS_CLUSTER_DATABASE_PROBLEM,
    });
  if (config.LIFEGUARD_REDIS_SENTINELS)
    context.addIssue({
      code: 'custom',
      path: ['LIFEGUARD_REDIS_CLUSTER_NODES'],
      message:
        'set either LIFEGUARD_REDIS_CLUSTER_NODES (a Redis Cluster) or LIFEGUARD_REDIS_SENTINELS (one master with Sentinels), not both',
    });
}

export type RuntimeConfig = z.output<ReturnType<typeof runtimeConfigSchema>>;

/**
 * Reads the runtime configuration from the environment (runtimeConfigSchema with checkRedisTopology).
 * @throws ConfigError naming each invalid variable
 */
export function loadRuntimeConfig(
  defaults: { httpPort: number },
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): RuntimeConfig {
  return parseConfig(runtimeConfigSchema(defaults).superRefine(checkRedisTopology), sources);
}
