import {
  ConfigError,
  checkRedisTopology,
  environmentSource,
  parseConfig,
  runtimeConfigSchema,
} from '@lifeguard/runtime';
import { z } from 'zod';

/** The console's port when LIFEGUARD_HTTP_PORT is not set (pages, `/events`, `/healthz`, `/metrics`). */
export const DEFAULT_CONSOLE_PORT = 9430;

/**
 * The console's settings: the runtime's `LIFEGUARD_*` (brokers, key prefix, LIFEGUARD_HTTP_HOST and
 * LIFEGUARD_HTTP_PORT for where the console listens, 127.0.0.1:9430 by default), plus its own.
 * Nova is found as the CLI finds it (clouds.yaml, OS_CLOUD, OS_*); InstanceHA's config.yaml as the node
 * monitor finds it (INSTANCEHA_CONFIG_PATH).
 */
export const consoleConfigSchema = runtimeConfigSchema({ httpPort: DEFAULT_CONSOLE_PORT })
  .extend({
    /**
     * The operator token. Unset: the console is read-only and refuses every write action. Set: a write
     * action (confirm-fenced, rehabilitate, replay a dead letter) runs only when its request carries this
     * token (form field `token` or `Authorization: Bearer <token>`). At least 16 characters.
     */
    LIFEGUARD_CONSOLE_OPERATOR_TOKEN: z
      .string()
      .min(16, 'must be at least 16 characters (e.g. `openssl rand -hex 24`)')
      .optional(),
    /** How often the pages re-read Nova and Redis when no event arrives, in seconds. */
    LIFEGUARD_CONSOLE_REFRESH_SECONDS: z.coerce.number().positive().max(600).default(5),
    /** How long one read of Redis, RabbitMQ or Nova may take before the page says it cannot see it, in seconds. */
    LIFEGUARD_CONSOLE_READ_TIMEOUT_SECONDS: z.coerce.number().positive().max(120).default(4),
    /** How many closed incidents the incidents page lists besides the open ones. */
    LIFEGUARD_CONSOLE_RECENT_INCIDENTS: z.coerce.number().int().positive().max(1000).default(20),
  })
  .superRefine(checkRedisTopology);
export type ConsoleConfig = z.output<typeof consoleConfigSchema>;

/**
 * Reads the console's settings.
 * @throws ConfigError naming every invalid variable (the token's value is never shown)
 */
export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  return parseConfig(consoleConfigSchema, [environmentSource(env)]);
}

export { ConfigError };
