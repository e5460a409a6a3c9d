/**
 * The configuration-file variables a simulated stack does not read. Without OS_CLOUD the launcher
 * runs the demo cloud (cloud-sim) and writes its own config.yaml and fencing.yaml for it (the demo's
 * hosts, their Redfish BMCs, a short POLL), so a path the operator exported for a real cloud is not
 * used: it is named, not silently replaced.
 */
const FILE_VARIABLES = ['INSTANCEHA_CONFIG_PATH', 'FENCING_CONFIG_PATH'] as const;

/**
 * One line per configuration-file variable set in `environment` that a simulated stack ignores,
 * naming it, its value and the file used instead; empty when none is set or the cloud is a real one
 * (`simulated` false: OS_CLOUD set, where both variables are required and used).
 */
export function ignoredFileVariables(
  environment: Readonly<Record<string, string | undefined>>,
  simulated: boolean,
): string[] {
  if (!simulated) return [];
  return FILE_VARIABLES.filter((name) => (environment[name] ?? '') !== '').map(
    (name) =>
      `${name}=${environment[name]} is not used: without OS_CLOUD, npm start runs the simulated demo cloud ` +
      `with a ${name === 'INSTANCEHA_CONFIG_PATH' ? 'config.yaml' : 'fencing.yaml'} of its own ` +
      '(set OS_CLOUD to run against your cloud with your files)',
  );
}

/**
 * The variables npm start sets itself for each worker it launches: one port each (from
 * `--http-port-base`), the provisioning role of each provisioning-blocks process, and each worker's
 * instance name. A value exported in the operator's shell cannot apply to every worker, so it is
 * named, not silently replaced.
 */
const WORKER_VARIABLES = {
  LIFEGUARD_HTTP_PORT: 'npm start gives each worker its own port (choose them with --http-port-base <port>)',
  LIFEGUARD_PROVISIONING_ROLE:
    'npm start runs the provisioning service and the port-status subscriber as two processes, each with its role',
  LIFEGUARD_INSTANCE_NAME: 'npm start names each worker <hostname>:<worker>',
} as const;

/** One line per per-worker variable set in `environment` that npm start sets itself; empty when none. */
export function ignoredWorkerVariables(environment: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(WORKER_VARIABLES)
    .filter(([name]) => environment[name] !== undefined)
    .map(([name, why]) => `${name}=${environment[name]} is not used: ${why}`);
}
