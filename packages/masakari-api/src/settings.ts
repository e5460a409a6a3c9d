/**
 * The Masakari API worker's own environment variables (the shared ones — Redis, RabbitMQ, health
 * port, logging — are runtime's; the service's OpenStack credentials are clouds.yaml / OS_*, as for
 * every worker). An invalid value stops start-up naming the variable.
 */
import { type ConfigSource, environmentSource, parseConfig } from '@lifeguard/runtime';
import { z } from 'zod';

/** Masakari's default API port (devstack's MASAKARI_SERVICE_PORT). */
export const MASAKARI_API_DEFAULT_PORT = 15868;

const url = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

export const masakariApiSettingsSchema = z.object({
  /** Port of Masakari's v1 API (default 15868, Masakari's). */
  LIFEGUARD_MASAKARI_API_PORT: z.coerce.number().int().min(0).max(65535).default(MASAKARI_API_DEFAULT_PORT),
  /** Address the API listens on (default every address). */
  LIFEGUARD_MASAKARI_API_BIND: z.string().min(1).default('0.0.0.0'),
  /**
   * `keystone` (default): every v1 call needs a Keystone token, validated as keystonemiddleware does,
   * and the admin role. `noauth2`: as Masakari's noauth2, every call is an admin's and no token is
   * checked — only for a simulated cloud without Keystone.
   */
  LIFEGUARD_MASAKARI_AUTH_STRATEGY: z.enum(['keystone', 'noauth2']).default('keystone'),
  /** Keystone to validate tokens against (default: clouds.yaml `auth_url` of the service's cloud). */
  LIFEGUARD_MASAKARI_KEYSTONE_URL: url.optional(),
  /** keystonemiddleware's `www_authenticate_uri`, sent with a 401 (default: the Keystone URL). */
  LIFEGUARD_MASAKARI_WWW_AUTHENTICATE_URI: url.optional(),
  /** How long a token's validation is kept, in seconds (never past its expiry; 0 keeps nothing). */
  LIFEGUARD_MASAKARI_TOKEN_CACHE_SECONDS: z.coerce.number().min(0).max(3600).default(60),
  /** Time limit of a call to Keystone, in seconds. */
  LIFEGUARD_MASAKARI_KEYSTONE_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(120).default(10),
  /** Masakari's `duplicate_notification_detection_interval`, in seconds (default 180, as Masakari). */
  LIFEGUARD_MASAKARI_DUPLICATE_SECONDS: z.coerce.number().min(0).max(86_400).default(180),
  /** Masakari's `osapi_masakari_link_prefix`: the base URL of the version documents' links. */
  LIFEGUARD_MASAKARI_LINK_PREFIX: url.optional(),
  /** Attempts of each `masakari-notification` job before BullMQ fails it (default 3). */
  LIFEGUARD_MASAKARI_JOB_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
  /** Seconds between two sweeps of the notification outbox (jobs not yet on the queue). */
  LIFEGUARD_MASAKARI_OUTBOX_SWEEP_SECONDS: z.coerce.number().min(0.1).max(3600).default(10),
});
export type MasakariApiSettings = z.output<typeof masakariApiSettingsSchema>;

/**
 * Reads the worker's environment variables.
 * @throws ConfigError naming each invalid variable
 */
export function loadMasakariApiSettings(
  sources: ReadonlyArray<ConfigSource> = [environmentSource()],
): MasakariApiSettings {
  return parseConfig(masakariApiSettingsSchema, sources);
}
