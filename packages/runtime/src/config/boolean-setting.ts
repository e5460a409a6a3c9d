import { z } from 'zod';

/**
 * A boolean environment variable: `true`, `1`, `yes`, `on` or `false`, `0`, `no`, `off`, empty (any
 * case). Any other value fails parsing, so the loader's ConfigError names the variable.
 *
 *     LIFEGUARD_LOG_PRETTY: booleanSetting.default(false)
 */
export const booleanSetting = z.stringbool({
  truthy: ['true', '1', 'yes', 'on'],
  falsy: ['false', '0', 'no', 'off', ''],
});
