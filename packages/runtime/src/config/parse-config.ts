import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../errors.ts';
import { isSecretKey, redactUrl } from './secret-keys.ts';

/** A named set of raw configuration values, e.g. the environment or one YAML file. */
export interface ConfigSource {
  /** `environment`, or the path of the file the values were read from. */
  readonly name: string;
  readonly values: Readonly<Record<string, unknown>>;
}

function describeValue(key: string, value: unknown): string | null {
  if (value === undefined) return null;
  if (isSecretKey(key)) return '[REDACTED]';
  const text = typeof value === 'string' ? redactUrl(value) : JSON.stringify(value);
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text).replace(/^"|"$/g, '"');
}

/**
 * Validates configuration drawn from several sources against one zod object schema whose keys are
 * the configuration keys. Later sources override earlier ones, key by key; keys the schema does not
 * know are ignored here (callers that must report them read `unknownKeys`).
 *
 * @returns the parsed configuration
 * @throws ConfigError naming every invalid key, the source it came from, the problem and the value
 *   (secrets masked), e.g. `LIFEGUARD_HTTP_PORT (environment): Too big: expected number to be <=65535; got "70000"`
 */
export function parseConfig<Schema extends z.ZodObject>(
  schema: Schema,
  sources: ReadonlyArray<ConfigSource>,
): z.output<Schema> {
  const known = new Set(Object.keys(schema.shape));
  const merged: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  for (const source of sources) {
    for (const [key, value] of Object.entries(source.values)) {
      if (!known.has(key) || value === undefined) continue;
      merged[key] = value;
      origin[key] = source.name;
    }
  }
  const result = schema.safeParse(merged);
  if (result.success) return result.data;
  const problems: ConfigProblem[] = result.error.issues.map((issue) => {
    const key = issue.path.map(String).join('.') || '(root)';
    const topKey = String(issue.path[0] ?? '');
    return {
      key,
      source: origin[topKey] ?? 'default',
      problem: issue.message,
      value: describeValue(key, merged[topKey]),
    };
  });
  throw new ConfigError(problems);
}

/** Keys present in a source that the schema does not define (to be logged once at start-up). */
export function unknownKeys(schema: z.ZodObject, source: ConfigSource): string[] {
  const known = new Set(Object.keys(schema.shape));
  return Object.keys(source.values).filter((key) => !known.has(key));
}

/** The process environment as a configuration source. */
export function environmentSource(env: NodeJS.ProcessEnv = process.env): ConfigSource {
  return { name: 'environment', values: env };
}
