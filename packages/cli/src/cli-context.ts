import { hostname, userInfo } from 'node:os';
import type { EventSource } from '@lifeguard/contracts';
import type { IncidentStore } from '@lifeguard/instance-ha';
import type { OpenStackClients } from '@lifeguard/openstack';
import { OperatorConnections } from '@lifeguard/operator-views';
import {
  type AmqpClient,
  ConfigError,
  checkRedisTopology,
  createLogger,
  type EventJournal,
  type EventPublisher,
  environmentSource,
  type Logger,
  parseConfig,
  type RedisClient,
  type RedisSettings,
  runtimeConfigSchema,
} from '@lifeguard/runtime';
import { z } from 'zod';
import type { CliIo } from './cli-io.ts';
import { CliError } from './errors.ts';
import { Progress } from './output/progress.ts';

/** A number of seconds in (0, `maximum`], `fallback` when unset; a word is refused in those terms. */
function seconds(maximum: number, fallback: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, `a number of seconds, e.g. ${fallback}`)
    .transform(Number)
    .pipe(z.number().positive('more than 0 s').max(maximum, `at most ${maximum} s`))
    .default(fallback);
}

/** The CLI's own variables, next to the runtime's `LIFEGUARD_*` that every worker reads. */
export const cliConfigSchema = runtimeConfigSchema({ httpPort: 0 })
  .extend({
    /** cloud-sim's API (or its `/_sim` control URL), for `lifeguard sim ...`. */
    LIFEGUARD_CLOUD_SIM_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8780'),
    /** How long to wait for Redis and RabbitMQ to answer before giving up, in seconds. */
    LIFEGUARD_CLI_CONNECT_TIMEOUT_SECONDS: seconds(120, 5),
    /**
     * How long one Nova, Glance or Keystone request of a command may take, in seconds (one retry
     * follows): a command reading a Nova that hangs says so instead of waiting minutes.
     */
    LIFEGUARD_CLI_OPENSTACK_TIMEOUT_SECONDS: seconds(300, 10),
  })
  .superRefine(checkRedisTopology);
export type CliConfig = z.output<typeof cliConfigSchema>;

/** The login name of the person running the command (`SUDO_USER` first: who ran `sudo`). */
export function operatorName(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.SUDO_USER || env.USER || env.LOGNAME;
  if (fromEnv) return fromEnv;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/**
 * One command's view of lifeguard: its configuration (the same environment variables as the workers),
 * and the connections it needs (OperatorConnections, as the console's), opened on first use and
 * closed by `close()`: Redis (the deployment's key prefix), RabbitMQ, and the OpenStack clients
 * (clouds.yaml / `OS_*`). It is the ActionConnections an operator action runs on.
 */
export class CliContext {
  private configuration: CliConfig | null = null;
  private opened: OperatorConnections | null = null;
  readonly logger: Logger;
  readonly operator: string;

  constructor(
    readonly io: CliIo,
    options: { verbose?: boolean } = {},
  ) {
    this.logger = createLogger({
      service: 'lifeguard-cli',
      level: options.verbose ? 'debug' : 'silent',
      destination: io.stderr,
    });
    this.operator = operatorName(io.env);
  }

  /**
   * The configuration from the environment.
   * @throws CliError naming every invalid variable
   */
  get config(): CliConfig {
    if (!this.configuration) {
      try {
        this.configuration = parseConfig(cliConfigSchema, [environmentSource(this.io.env)]);
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(error.message);
        throw error;
      }
    }
    return this.configuration;
  }

  /** The deployment's Redis key prefix (LIFEGUARD_REDIS_KEY_PREFIX). */
  get keyPrefix(): string {
    return this.config.LIFEGUARD_REDIS_KEY_PREFIX;
  }

  /** Who published an event from this command: service `lifeguard-cli`, instance `<operator>@<host>`. */
  get source(): EventSource {
    return { service: 'lifeguard-cli', instance: `${this.operator}@${hostname()}` };
  }

  /**
   * Redis, RabbitMQ and the OpenStack clients, made on first use from the configuration; a connection
   * that failed is not tried again within the command.
   */
  private get connections(): OperatorConnections {
    this.opened ??= new OperatorConnections({
      config: this.config,
      env: this.io.env,
      source: this.source,
      logger: this.logger,
      connectTimeoutMilliseconds: this.config.LIFEGUARD_CLI_CONNECT_TIMEOUT_SECONDS * 1000,
      openstackTimeoutMilliseconds: this.config.LIFEGUARD_CLI_OPENSTACK_TIMEOUT_SECONDS * 1000,
      openstackAttempts: 2,
      retryFailedConnections: false,
    });
    return this.opened;
  }

  get redisSettings(): RedisSettings {
    return this.connections.redisSettings;
  }

  /**
   * Redis, connected (connection name `lifeguard-cli:<operator>@<host>`).
   * @throws BrokerUnreachableError naming the address, the cause and how to start it
   * @throws BrokerRefusedError when Redis refuses the database index or the password of LIFEGUARD_REDIS_URL
   */
  redis(): Promise<RedisClient> {
    return this.connections.redis();
  }

  /**
   * RabbitMQ, connected (connection name `lifeguard-cli:<operator>@<host>`).
   * @throws BrokerUnreachableError naming the address, the cause and how to start it
   * @throws BrokerRefusedError when RabbitMQ refuses the credentials or the vhost of LIFEGUARD_AMQP_URL
   */
  amqp(): Promise<AmqpClient> {
    return this.connections.amqp();
  }

  /** The Nova and Glance clients. @throws CloudConfigError when no cloud is configured */
  openstack(): OpenStackClients {
    return this.connections.openstack();
  }

  /** lifeguard's incidents under the deployment's key prefix. */
  incidents(): Promise<IncidentStore> {
    return this.connections.incidents();
  }

  async journal(): Promise<EventJournal> {
    return this.connections.journal();
  }

  /** Publishes events as the workers do: confirmed, then journalled in the incident's timeline. */
  async events(): Promise<EventPublisher> {
    return this.connections.events();
  }

  /** Progress lines for a long operation (standard error when standard output carries JSON). */
  progress(json = false): Progress {
    return new Progress(json ? this.io.stderr : this.io.stdout);
  }

  /** Writes a line (or lines) to standard output. */
  print(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** True once the command printed its JSON (a failure after that is not printed as JSON too). */
  printedJson = false;

  /** Writes a value as indented JSON to standard output. */
  printJson(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    this.printedJson = true;
  }

  /** Writes a line to standard error (warnings, notes that must not mix with JSON output). */
  note(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Closes every connection this command opened. */
  async close(): Promise<void> {
    await this.opened?.close();
  }
}
