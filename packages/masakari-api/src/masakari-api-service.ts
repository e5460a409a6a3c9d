/**
 * The Masakari API worker's parts put together: the store, the notification queue and its outbox
 * sweep, the token validator, Nova's compute-service check, and the HTTP server of Masakari's v1 API.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AuthProvider, type ComputeApi, findComputeService } from '@lifeguard/openstack';
import { bullmqPrefix, type Logger, listenErrorAsConfigError, type RedisClient } from '@lifeguard/runtime';
import { Queue } from 'bullmq';
import { Counter, Histogram, type Registry } from 'prom-client';
import { masakariRequestListener } from './api/masakari-http.ts';
import { KeystoneTokenValidator, type TokenValidation } from './auth/token-validator.ts';
import { ComputeNotFoundByNameError } from './errors.ts';
import { NotificationQueue } from './notification-queue.ts';
import { MASAKARI_NOTIFICATION_QUEUE } from './records.ts';
import type { AuthStrategy, MasakariApiSettings } from './settings.ts';
import { MasakariStore } from './store/masakari-store.ts';
import { SegmentWrites } from './store/segment-writes.ts';

export interface MasakariApiOptions {
  settings: MasakariApiSettings;
  /** How callers are authenticated (see chooseAuthStrategy). */
  strategy: AuthStrategy;
  redis: RedisClient;
  keyPrefix: string;
  /** Nova, to check host names; its token is the service's. */
  compute: ComputeApi;
  /** The service's own Keystone session (its token validates callers' tokens); null with noauth2. */
  auth: AuthProvider | null;
  /** Keystone's URL (clouds.yaml `auth_url`); null with noauth2. */
  authUrl: string | null;
  logger: Logger;
  registry?: Registry;
}

/** noauth2: every caller is an admin (Masakari's NoAuthMiddleware), no token is read. */
const NOAUTH_CALLER: TokenValidation = {
  kind: 'valid',
  token: {
    userId: 'admin',
    projectId: null,
    roles: ['admin'],
    expiresAtMilliseconds: Number.POSITIVE_INFINITY,
  },
};

function tokenValidator(options: MasakariApiOptions): {
  validate(token: string | null): Promise<TokenValidation>;
} {
  const { settings, auth } = options;
  if (options.strategy === 'noauth2') return { validate: async () => NOAUTH_CALLER };
  const authUrl = settings.LIFEGUARD_MASAKARI_KEYSTONE_URL ?? options.authUrl;
  if (auth === null || authUrl === null)
    throw new Error('the keystone auth strategy needs Keystone credentials');
  return new KeystoneTokenValidator({
    authUrl,
    serviceToken: () => auth.token(),
    invalidateServiceToken: (token) => auth.invalidate(token),
    cacheSeconds: settings.LIFEGUARD_MASAKARI_TOKEN_CACHE_SECONDS,
    timeoutMilliseconds: settings.LIFEGUARD_MASAKARI_KEYSTONE_TIMEOUT_SECONDS * 1000,
  });
}

function requestMetrics(registry: Registry | undefined) {
  if (registry === undefined) return undefined;
  const requests = new Counter({
    name: 'lifeguard_masakari_api_requests_total',
    help: 'Masakari API requests answered, by operation (policy rule or document) and status code',
    labelNames: ['operation', 'status'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'lifeguard_masakari_api_request_seconds',
    help: 'Time to answer a Masakari API request, by operation',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return (answer: { operation: string; status: number; seconds: number }) => {
    requests.inc({ operation: answer.operation, status: String(answer.status) });
    seconds.observe({ operation: answer.operation }, answer.seconds);
  };
}

export class MasakariApi {
  private constructor(
    readonly server: Server,
    readonly store: MasakariStore,
    readonly notifications: NotificationQueue,
    private readonly queue: Queue,
  ) {}

  /** The port the API listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * Listens on LIFEGUARD_MASAKARI_API_BIND:LIFEGUARD_MASAKARI_API_PORT and starts the outbox sweep.
   * @throws ConfigError naming LIFEGUARD_MASAKARI_API_PORT when the port cannot be listened on
   */
  static async start(options: MasakariApiOptions): Promise<MasakariApi> {
    const { settings, logger } = options;
    const store = new MasakariStore({ redis: options.redis, keyPrefix: options.keyPrefix });
    const queue = new Queue(MASAKARI_NOTIFICATION_QUEUE, {
      connection: options.redis,
      prefix: bullmqPrefix(options.keyPrefix),
    });
    const notifications = new NotificationQueue({
      queue,
      store,
      logger: logger.child({ component: 'notification-queue' }),
      attempts: settings.LIFEGUARD_MASAKARI_JOB_ATTEMPTS,
      backoffMilliseconds: 5000,
    });
    const listener = masakariRequestListener({
      services: {
        store,
        writes: new SegmentWrites(store),
        checkComputeHost: async (name) => {
          if ((await findComputeService(options.compute, name, null)) === null)
            throw new ComputeNotFoundByNameError(name);
        },
        duplicateSeconds: settings.LIFEGUARD_MASAKARI_DUPLICATE_SECONDS,
        enqueue: (notification) => notifications.enqueue(notification.notificationUuid),
      },
      tokens: tokenValidator(options),
      wwwAuthenticateUri:
        settings.LIFEGUARD_MASAKARI_WWW_AUTHENTICATE_URI ??
        settings.LIFEGUARD_MASAKARI_KEYSTONE_URL ??
        options.authUrl ??
        '',
      logger: logger.child({ component: 'masakari-api' }),
      linkPrefix: settings.LIFEGUARD_MASAKARI_LINK_PREFIX ?? null,
      ...(options.registry ? { observe: requestMetrics(options.registry)! } : {}),
    });
    const server = createServer(listener);
    const { LIFEGUARD_MASAKARI_API_BIND: host, LIFEGUARD_MASAKARI_API_PORT: port } = settings;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          listenErrorAsConfigError(
            error,
            { port: 'LIFEGUARD_MASAKARI_API_PORT', host: 'LIFEGUARD_MASAKARI_API_BIND' },
            host,
            port,
          ),
        ),
      );
      server.listen(port, host, () => resolve());
    });
    notifications.start(settings.LIFEGUARD_MASAKARI_OUTBOX_SWEEP_SECONDS);
    return new MasakariApi(server, store, notifications, queue);
  }

  /** Stops accepting requests, finishes those in progress, stops the sweep and closes the queue. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.notifications.close();
    await this.queue.close();
  }
}
