import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { PACKAGE_REPOSITORY_ROOT } from '../../src/index.ts';

/** A Compose duration as we write them: `10s`, `1m30s`. */
const duration = z.string().regex(/^(\d+m)?(\d+s)?$/, 'a duration such as 10s or 1m30s');

const healthcheckSchema = z.strictObject({
  test: z
    .array(z.string())
    .min(2)
    .refine((test) => test[0] === 'CMD' || test[0] === 'CMD-SHELL', 'starts with CMD or CMD-SHELL'),
  interval: duration,
  timeout: duration,
  retries: z.number().int().positive(),
  start_period: duration.optional(),
});

const dependencySchema = z.strictObject({
  condition: z.enum(['service_started', 'service_healthy', 'service_completed_successfully']),
  required: z.boolean().optional(),
});

const fileReferenceSchema = z.union([
  z.string(),
  z.strictObject({ source: z.string(), target: z.string(), mode: z.number().optional() }),
]);

/** The subset of the Compose specification lifeguard's docker-compose.yml uses, strictly. */
export const composeServiceSchema = z.strictObject({
  image: z.string().optional(),
  build: z.strictObject({ context: z.string(), dockerfile: z.string() }).optional(),
  hostname: z.string().optional(),
  container_name: z.string().optional(),
  init: z.boolean().optional(),
  restart: z.enum(['no', 'always', 'on-failure', 'unless-stopped']).optional(),
  stop_grace_period: duration.optional(),
  profiles: z.array(z.string()).optional(),
  entrypoint: z.array(z.string()).optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  ports: z.array(z.string().regex(/^(\d+\.\d+\.\d+\.\d+:)?\d+:\d+$/)).optional(),
  volumes: z.array(z.string()).optional(),
  networks: z
    .union([z.array(z.string()), z.record(z.string(), z.strictObject({ ipv4_address: z.string() }))])
    .optional(),
  depends_on: z.record(z.string(), dependencySchema).optional(),
  healthcheck: healthcheckSchema.optional(),
  secrets: z.array(fileReferenceSchema).optional(),
  configs: z.array(fileReferenceSchema).optional(),
});
export type ComposeService = z.output<typeof composeServiceSchema>;

export const composeFileSchema = z
  .object({
    name: z.string(),
    services: z.record(z.string().regex(/^[a-zA-Z0-9._-]+$/), composeServiceSchema),
    networks: z
      .record(
        z.string(),
        z.strictObject({ ipam: z.strictObject({ config: z.array(z.strictObject({ subnet: z.string() })) }) }),
      )
      .optional(),
    volumes: z.record(z.string(), z.null()).optional(),
    secrets: z.record(z.string(), z.strictObject({ file: z.string() })).optional(),
    configs: z.record(z.string(), z.strictObject({ file: z.string() })).optional(),
  })
  .catchall(z.unknown())
  .refine(
    (file) =>
      Object.keys(file).every(
        (key) =>
          ['name', 'services', 'networks', 'volumes', 'secrets', 'configs'].includes(key) ||
          key.startsWith('x-'),
      ),
    'top-level keys are name, services, networks, volumes, secrets, configs and x- extensions',
  );
export type ComposeFile = z.output<typeof composeFileSchema>;

export const COMPOSE_PATH = join(PACKAGE_REPOSITORY_ROOT, 'docker-compose.yml');

/** docker-compose.yml as Compose reads it: YAML with anchors and merge keys, not yet interpolated. */
export function readComposeFile(path = COMPOSE_PATH): ComposeFile {
  return composeFileSchema.parse(parse(readFileSync(path, 'utf8'), { merge: true }));
}

/**
 * Compose's interpolation in the forms the file uses: `${NAME:-default}` (default when unset or
 * empty) and `${NAME}`; `$$` is a literal `$`.
 * @throws Error for any other `$` form, so a new form is noticed
 */
export function interpolate(value: string, env: Readonly<Record<string, string | undefined>> = {}): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}|\$/g, (match, name, _, fallback) => {
    if (match === '$$') return '$';
    if (match === '$') throw new Error(`unsupported interpolation in "${value}"`);
    const given = env[name as string];
    if (fallback !== undefined) return given ? given : (fallback as string);
    return given ?? '';
  });
}

/** Seconds of a Compose duration (`35s`, `1m30s`). */
export function durationSeconds(value: string): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
  if (!match) throw new Error(`not a duration: ${value}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

/** Where a service's secrets and configs appear in its container. */
export function mountedFiles(
  compose: ComposeFile,
  service: ComposeService,
): Array<{ target: string; file: string }> {
  const mounts: Array<{ target: string; file: string }> = [];
  for (const reference of service.secrets ?? []) {
    const name = typeof reference === 'string' ? reference : reference.source;
    const target = typeof reference === 'string' ? `/run/secrets/${name}` : reference.target;
    const file = compose.secrets?.[name]?.file;
    if (!file) throw new Error(`secret ${name} is not defined`);
    mounts.push({
      target: target.startsWith('/') ? target : `/run/secrets/${target}`,
      file: interpolate(file),
    });
  }
  for (const reference of service.configs ?? []) {
    const name = typeof reference === 'string' ? reference : reference.source;
    const target = typeof reference === 'string' ? `/${name}` : reference.target;
    const file = compose.configs?.[name]?.file;
    if (!file) throw new Error(`config ${name} is not defined`);
    mounts.push({ target, file: interpolate(file) });
  }
  return mounts;
}
