// The steps of startStack (stack.ts) that need no running stack: what must be built, which ports
// must be free, each worker's process and environment, and the files written once every worker is ready.
import { existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { CloudSim } from '@lifeguard/cloud-sim';
import type { RedisClient } from '@lifeguard/runtime';
import { redactUrl } from '@lifeguard/runtime';
import { StackConfigurationError } from './errors.ts';
import type { WorkerLogLine } from './log-output.ts';
import { checkPortsFree } from './preflight.ts';
import {
  DEMO_WORKER_ENVIRONMENT,
  SIMULATED_CLOUD_NAME,
  type StackFiles,
  shellExports,
  workerEnvironmentFile,
  writeFileAtomically,
} from './stack-files.ts';
import type { ResolvedStackOptions, SimulatedCloudOptions } from './stack-options.ts';
import type { WorkerDefinition } from './worker-definitions.ts';
import { nodeOptions, registryPortLookup } from './worker-launch.ts';
import { type WorkerExit, WorkerProcess } from './worker-process.ts';

/**
 * Every worker's script (dist or source, by `options.run`) and, for dist, the parent watch exist.
 * @throws StackConfigurationError naming what is missing
 */
export function checkBuilt(
  options: ResolvedStackOptions,
  definitions: ReadonlyArray<WorkerDefinition>,
): void {
  const missing = [
    ...new Set(definitions.map((d) => (options.run === 'dist' ? d.script : d.sourceScript))),
  ].filter((script) => !existsSync(join(options.repositoryRoot, script)));
  if (options.run === 'dist')
    missing.push(
      ...['packages/stack/dist/parent-watch.js'].filter((f) => !existsSync(join(options.repositoryRoot, f))),
    );
  if (missing.length > 0) {
    throw new StackConfigurationError(
      `not built: ${missing.join(', ')} missing in ${options.repositoryRoot}; run npm run build (npm start does)`,
    );
  }
}

/**
 * Checks that the workers' health ports and cloud-sim's API and Redfish ports are free (0: any).
 * @returns cloud-sim's API and Redfish ports (8780 and 8443 unless given, or 0 with free HTTP ports)
 */
export async function checkStackPorts(
  options: ResolvedStackOptions,
  definitions: ReadonlyArray<WorkerDefinition>,
  ports: ReadonlyArray<number>,
  simulated: SimulatedCloudOptions | null,
): Promise<{ simPort: number; redfishPort: number }> {
  const simPort = simulated?.port ?? (options.httpPorts === 'free' ? 0 : 8780);
  const redfishPort = simulated?.redfishPort ?? (options.httpPorts === 'free' ? 0 : 8443);
  await checkPortsFree([
    ...definitions.map((definition, index) => ({
      owner: definition.name,
      port: ports[index]!,
      host: options.httpHost,
    })),
    { owner: 'masakari-api (Masakari v1 API)', port: masakariApiPort(options), host: options.httpHost },
    ...(simulated
      ? [
          { owner: 'cloud-sim API', port: simPort, host: simulated.listenHost },
          { owner: 'cloud-sim Redfish BMCs', port: redfishPort, host: simulated.listenHost },
        ]
      : []),
  ]);
  return { simPort, redfishPort };
}

/** The Masakari API's port: Masakari's 15868, or any free one when the health ports are chosen free. */
export function masakariApiPort(options: ResolvedStackOptions): number {
  return options.httpPorts === 'free' ? 0 : 15868;
}

/** One worker's process (not started) and its environment, as startStack launches it. */
export function createWorkerProcess(parts: {
  options: ResolvedStackOptions;
  definition: WorkerDefinition;
  port: number;
  /** The environment the workers inherit (inheritedEnvironment). */
  inherited: Record<string, string>;
  files: StackFiles;
  simulated: boolean;
  registryRedis: RedisClient | null;
  onLine: (line: WorkerLogLine) => void;
  onExit: (worker: WorkerProcess, exit: WorkerExit) => void;
}): WorkerProcess {
  const { options, definition, files, registryRedis } = parts;
  const env = {
    ...(parts.simulated ? DEMO_WORKER_ENVIRONMENT : {}),
    ...parts.inherited,
    LIFEGUARD_AMQP_URL: options.amqpUrl,
    LIFEGUARD_REDIS_URL: options.redisUrl,
    ...options.redisTopology,
    LIFEGUARD_REDIS_KEY_PREFIX: options.keyPrefix,
    LIFEGUARD_HTTP_HOST: options.httpHost,
    LIFEGUARD_HTTP_PORT: String(parts.port),
    LIFEGUARD_INSTANCE_NAME: `${hostname()}:${definition.name}`,
    INSTANCEHA_CONFIG_PATH: files.configYaml,
    FENCING_CONFIG_PATH: files.fencingYaml,
    ...cloudEnvironment(options, files),
    ...options.environment,
    ...(definition.kind === 'masakari-api'
      ? {
          LIFEGUARD_MASAKARI_API_PORT: String(masakariApiPort(options)),
          LIFEGUARD_MASAKARI_API_BIND: options.httpHost,
        }
      : {}),
    ...definition.roleEnvironment,
    ...options.workerEnvironment[definition.kind],
    LIFEGUARD_STACK_PARENT_PID: String(process.pid),
    NODE_OPTIONS: nodeOptions(options),
  };
  return new WorkerProcess({
    definition,
    command: process.execPath,
    args: [options.run === 'dist' ? definition.script : definition.sourceScript],
    cwd: options.repositoryRoot,
    env,
    httpHost: options.httpHost,
    httpPort: Number(env.LIFEGUARD_HTTP_PORT),
    ...(registryRedis
      ? {
          findHttpPort: registryPortLookup(
            registryRedis,
            options.keyPrefix,
            definition.service,
            env.LIFEGUARD_INSTANCE_NAME,
          ),
        }
      : {}),
    onLine: parts.onLine,
    onExit: parts.onExit,
  });
}

/** OS_CLOUD (and OS_CLIENT_CONFIG_FILE) of the cloud the workers use: the given one, or cloud-sim's. */
function cloudEnvironment(options: ResolvedStackOptions, files: StackFiles): Record<string, string> {
  return options.cloud.kind === 'openstack'
    ? {
        OS_CLOUD: options.cloud.cloudName,
        ...(options.cloud.cloudsFile ? { OS_CLIENT_CONFIG_FILE: options.cloud.cloudsFile } : {}),
      }
    : { OS_CLOUD: SIMULATED_CLOUD_NAME, OS_CLIENT_CONFIG_FILE: files.cloudsYaml! };
}

/** What the run files describe. */
interface RunFileParts {
  options: ResolvedStackOptions;
  files: StackFiles;
  workers: ReadonlyArray<WorkerProcess>;
  cloudSim: CloudSim | null;
  /** When the launcher started the stack. */
  startedAt: Date;
}

/**
 * Writes, once every worker is ready: `env` (the client environment), one environment file per worker,
 * and `stack.json` (writeManifest).
 */
export function writeRunFiles(parts: RunFileParts & { clientEnvironment: Record<string, string> }): void {
  const { files, workers } = parts;
  writeFileAtomically(files.environmentFile, `${shellExports(parts.clientEnvironment)}\n`);
  mkdirSync(files.workerEnvironmentDirectory, { recursive: true, mode: 0o700 });
  for (const worker of workers) {
    const path = join(files.workerEnvironmentDirectory, `${worker.name}.env`);
    writeFileAtomically(
      path,
      workerEnvironmentFile(worker.name, path, worker.options.definition.script, worker.options.env),
    );
  }
  writeManifest(parts);
}

/**
 * Writes `stack.json`: the launcher's pid, when it started, the cloud, the redacted broker URLs, each
 * worker's name, current pid and URL, cloud-sim's URLs and the files. Written again whenever a worker
 * is restarted, so the pids are those running.
 */
export function writeManifest(parts: RunFileParts): void {
  const { options, files, workers, cloudSim } = parts;
  writeFileAtomically(
    files.manifest,
    `${JSON.stringify(
      {
        pid: process.pid,
        startedAt: parts.startedAt.toISOString(),
        cloud: options.cloud.kind,
        amqp: redactUrl(options.amqpUrl),
        redis: redactUrl(options.redisUrl),
        keyPrefix: options.keyPrefix,
        workers: workers.map((worker) => ({ name: worker.name, pid: worker.pid, url: worker.baseUrl })),
        cloudSim: cloudSim?.urls ?? null,
        files,
      },
      null,
      2,
    )}\n`,
  );
}
