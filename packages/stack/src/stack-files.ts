import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CloudSim } from '@lifeguard/cloud-sim';
import { stringify } from 'yaml';

/** The clouds.yaml name of the simulated cloud. */
export const SIMULATED_CLOUD_NAME = 'lifeguard-sim';

/**
 * InstanceHA keys of the demo's config.yaml: polls every 5 s (below InstanceHA's 15 s minimum, so the
 * workers run with LIFEGUARD_UNSAFE_SHORT_INTERVALS), DELTA 10 s against cloud-sim's 2 s report
 * interval, smart evacuation, reserved hosts and every tag filter on.
 */
export const DEMO_INSTANCE_HA_CONFIG: Readonly<Record<string, string>> = {
  POLL: '5',
  DELTA: '10',
  THRESHOLD: '50',
  MAX_HOSTS_PER_CYCLE: '10',
  WORKERS: '4',
  EVACUATION_TIMEOUT: '60',
  FENCING_TIMEOUT: '30',
  SMART_EVACUATION: 'true',
  RESERVED_HOSTS: 'true',
  EVACUABLE_TAG: 'evacuable',
  TAGGED_IMAGES: 'true',
  TAGGED_FLAVORS: 'true',
  TAGGED_AGGREGATES: 'true',
  LOGLEVEL: 'INFO',
};

/**
 * Worker variables of the simulated stack (the operator's environment and the stack's options win):
 * short intervals allowed, BMCs on loopback allowed, evacuations looked at every second.
 */
export const DEMO_WORKER_ENVIRONMENT: Readonly<Record<string, string>> = {
  LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
  LIFEGUARD_FENCING_ALLOW_LOOPBACK: 'true',
  LIFEGUARD_EVACUATION_FIRST_CHECK_SECONDS: '1',
  LIFEGUARD_EVACUATION_POLL_SECONDS: '1',
};

/** Paths of the files the stack writes into its state directory. */
export interface StackFiles {
  readonly directory: string;
  /** clouds.yaml with the simulated cloud (absent with a real cloud). */
  readonly cloudsYaml: string | null;
  /** config.yaml (InstanceHA's keys): written for the simulated cloud, the operator's otherwise. */
  readonly configYaml: string;
  /** fencing.yaml: written for the simulated cloud, the operator's otherwise. */
  readonly fencingYaml: string;
  /** Shell variables that point the lifeguard CLI at this stack (`source .lifeguard/env`). */
  readonly environmentFile: string;
  /** What runs where, as JSON, while the stack runs. */
  readonly manifest: string;
  /** `workers/<name>.env`: the variables of one worker, to run it by hand (see workerEnvironmentFile). */
  readonly workerEnvironmentDirectory: string;
}

/** Prefixes of the variables a worker reads; LIFEGUARD_STACK_* are the launcher's own. */
const WORKER_VARIABLE_PREFIXES = ['LIFEGUARD_', 'OS_', 'INSTANCEHA_', 'FENCING_'];

/**
 * The text of `workers/<name>.env`: every variable of a worker's environment that lifeguard or the
 * OpenStack client reads (LIFEGUARD_*, OS_*, INSTANCEHA_*, FENCING_*; not the launcher's
 * LIFEGUARD_STACK_*), as `export` lines, after a comment with the command that runs the worker.
 */
export function workerEnvironmentFile(
  name: string,
  /** Where the file is written (named in its comment). */
  path: string,
  script: string,
  environment: Readonly<Record<string, string | undefined>>,
): string {
  const variables: Record<string, string> = {};
  for (const [variable, value] of Object.entries(environment).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined || variable.startsWith('LIFEGUARD_STACK_')) continue;
    if (WORKER_VARIABLE_PREFIXES.some((prefix) => variable.startsWith(prefix))) variables[variable] = value;
  }
  return (
    `# ${name} as the stack runs it. From the checkout, to run it by hand:\n` +
    `#   (. ${path} && exec node ${script})\n` +
    `${shellExports(variables)}\n`
  );
}

/** Writes a file through a temporary name, so a reader never sees half of it. */
export function writeFileAtomically(path: string, content: string, mode = 0o600): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode });
  chmodSync(temporary, mode);
  renameSync(temporary, path);
}

/**
 * Writes a file the launcher generates (the simulated cloud's config.yaml) unless a person edited the
 * copy it wrote last time: what it writes is kept beside the file (`<file>.generated`), and a file
 * that differs from that is left as it is — `kept`, for the caller to say so. A file without that
 * record (none yet, or written by an older launcher) is written.
 */
export function writeGeneratedFile(path: string, content: string): 'written' | 'kept' {
  const record = `${path}.generated`;
  if (existsSync(path) && existsSync(record) && readFileSync(path, 'utf8') !== readFileSync(record, 'utf8'))
    return 'kept';
  writeFileAtomically(path, content);
  writeFileAtomically(record, content);
  return 'written';
}

/** config.yaml with the demo keys and `overrides` (InstanceHA key → value) over them. */
export function instanceHaConfigYaml(overrides: Readonly<Record<string, string>> = {}): string {
  const config = { ...DEMO_INSTANCE_HA_CONFIG, ...overrides };
  return `# InstanceHA's keys for the simulated cloud (short intervals for a demo).\n${stringify({ config })}`;
}

/** clouds.yaml with the simulated cloud under SIMULATED_CLOUD_NAME. */
export function simulatedCloudsYaml(sim: CloudSim): string {
  return stringify({ clouds: { [SIMULATED_CLOUD_NAME]: sim.cloudEntry('admin_token') } });
}

/** `export NAME='value'` lines, single-quoted for the shell. */
export function shellExports(variables: Readonly<Record<string, string>>): string {
  return Object.entries(variables)
    .map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'`)
    .join('\n');
}

/** Creates the state directory (mode 0700) and returns the paths the stack uses in it. */
export function prepareStateDirectory(
  directory: string,
  operatorFiles: { configYaml: string; fencingYaml: string } | null,
): StackFiles {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  return {
    directory,
    cloudsYaml: operatorFiles ? null : join(directory, 'clouds.yaml'),
    configYaml: operatorFiles?.configYaml ?? join(directory, 'config.yaml'),
    fencingYaml: operatorFiles?.fencingYaml ?? join(directory, 'fencing.yaml'),
    environmentFile: join(directory, 'env'),
    manifest: join(directory, 'stack.json'),
    workerEnvironmentDirectory: join(directory, 'workers'),
  };
}
