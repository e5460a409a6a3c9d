/** Why the test runner could not have the real-Nova harness, when it could not (scripts/real-nova-harness.mjs). */
const UNAVAILABLE = 'RN_UNAVAILABLE';

/** The variables of the harness's Compute and Image APIs, its token, image, flavor and compute hosts. */
export const REAL_NOVA_API_VARIABLES = [
  'NOVA_URL',
  'GLANCE_URL',
  'RN_TOKEN',
  'RN_IMAGE_ID',
  'RN_FLAVOR_ID',
  'RN_COMPUTE_HOSTS',
] as const;

/**
 * The real-Nova harness's variables that a test needs, as the test runner exported them from the
 * harness's env.sh (scripts/run-tests.mjs).
 * @throws Error naming why the runner could not have the harness, or else the missing variables
 */
export function requireRealNovaVariables<Name extends string>(
  names: ReadonlyArray<Name>,
  environment: NodeJS.ProcessEnv = process.env,
): Record<Name, string> {
  const missing = names.filter((name) => !environment[name]);
  if (missing.length === 0)
    return Object.fromEntries(names.map((name) => [name, environment[name]!])) as Record<Name, string>;
  const why = environment[UNAVAILABLE];
  throw new Error(
    why
      ? `the real-Nova harness could not be had for this run: ${why}`
      : `the real-Nova harness is not running (missing ${missing.join(', ')}): run the test through \`npm test\`, which starts test/harness/real-nova, or source $RN_STATE/env.sh`,
  );
}
