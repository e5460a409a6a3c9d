/**
 * The lifeguard worker processes the stack runs, with the same command lines docker-compose.yml
 * states (`node packages/<package>/dist/main.js` from the repository root, which is the image's
 * working directory) and the same role variables.
 */

import { WORKER_KINDS, type WorkerKind } from '@lifeguard/contracts';

/** The kinds of worker process (from contracts); docker-compose.yml has one service of each name. */
export { WORKER_KINDS, type WorkerKind };

export interface WorkerDefinition {
  /** The process name in logs and the banner: the kind, or `evacuation-worker-<n>` for replicas. */
  readonly name: string;
  readonly kind: WorkerKind;
  /** The service name the process reports (logs, worker registry): port-status is `provisioning-blocks`. */
  readonly service: string;
  /** The workspace package whose `main` the process runs. */
  readonly packageName: string;
  /** The compiled entry point, relative to the repository root (the compose `command`). */
  readonly script: string;
  /** The TypeScript entry point, relative to the repository root (run with tsx in source mode). */
  readonly sourceScript: string;
  /** The health and metrics port this process uses unless ports are chosen otherwise. */
  readonly defaultHttpPort: number;
  /** Variables that make this process the role it is (LIFEGUARD_PROVISIONING_ROLE, ...). */
  readonly roleEnvironment: Readonly<Record<string, string>>;
}

function entry(directory: string) {
  return {
    script: `packages/${directory}/dist/main.js`,
    sourceScript: `packages/${directory}/src/main.ts`,
  };
}

/**
 * Health ports: each worker's own default (provisioning-blocks 9410, node-monitor 9402, fencing-worker
 * 9403, evacuation-worker 9404, masakari-api 9406, masakari-engine 9407, instance-restart-worker
 * 9408), the port-status subscriber 9411, and evacuation workers 2, 3, ... from 9420 upwards (9405 to
 * 9409 stay free for the workers' own defaults).
 */
export const DEFAULT_HTTP_PORTS = {
  'provisioning-blocks': 9410,
  'port-status': 9411,
  'node-monitor': 9402,
  'fencing-worker': 9403,
  'evacuation-worker': 9404,
  'instance-restart-worker': 9408,
  'masakari-api': 9406,
  'masakari-engine': 9407,
  /** The second evacuation worker; the n-th uses this + n - 2. */
  'evacuation-worker-2': 9420,
} as const;

/** A worker kind run as one process of its own name, with its own default health port. */
function singleProcessWorker(
  kind: 'instance-restart-worker' | 'masakari-api' | 'masakari-engine',
): WorkerDefinition {
  return {
    name: kind,
    kind,
    service: kind,
    packageName: `@lifeguard/${kind}`,
    ...entry(kind),
    defaultHttpPort: DEFAULT_HTTP_PORTS[kind],
    roleEnvironment: {},
  };
}

/**
 * Every process of a stack with `evacuationWorkers` evacuation workers, in start order: the
 * provisioning service and its port-status subscriber, the node monitor, the fencing worker, then the
 * evacuation workers (`evacuation-worker` when there is one, `evacuation-worker-1..n` otherwise), then
 * the instance restart worker, the Masakari API and the Masakari engine.
 */
export function workerDefinitions(evacuationWorkers: number): WorkerDefinition[] {
  const definitions: WorkerDefinition[] = [
    {
      name: 'provisioning-blocks',
      kind: 'provisioning-blocks',
      service: 'provisioning-blocks',
      packageName: '@lifeguard/provisioning-blocks',
      ...entry('provisioning-blocks'),
      defaultHttpPort: DEFAULT_HTTP_PORTS['provisioning-blocks'],
      roleEnvironment: { LIFEGUARD_PROVISIONING_ROLE: 'service' },
    },
    {
      name: 'port-status',
      kind: 'port-status',
      service: 'port-status',
      packageName: '@lifeguard/provisioning-blocks',
      ...entry('provisioning-blocks'),
      defaultHttpPort: DEFAULT_HTTP_PORTS['port-status'],
      roleEnvironment: { LIFEGUARD_PROVISIONING_ROLE: 'port-status' },
    },
    {
      name: 'node-monitor',
      kind: 'node-monitor',
      service: 'node-monitor',
      packageName: '@lifeguard/node-monitor',
      ...entry('node-monitor'),
      defaultHttpPort: DEFAULT_HTTP_PORTS['node-monitor'],
      roleEnvironment: {},
    },
    {
      name: 'fencing-worker',
      kind: 'fencing-worker',
      service: 'fencing-worker',
      packageName: '@lifeguard/fencing-worker',
      ...entry('fencing-worker'),
      defaultHttpPort: DEFAULT_HTTP_PORTS['fencing-worker'],
      roleEnvironment: {},
    },
  ];
  for (let number = 1; number <= evacuationWorkers; number++) {
    definitions.push({
      name: evacuationWorkers === 1 ? 'evacuation-worker' : `evacuation-worker-${number}`,
      kind: 'evacuation-worker',
      service: 'evacuation-worker',
      packageName: '@lifeguard/evacuation-worker',
      ...entry('evacuation-worker'),
      defaultHttpPort:
        number === 1
          ? DEFAULT_HTTP_PORTS['evacuation-worker']
          : DEFAULT_HTTP_PORTS['evacuation-worker-2'] + number - 2,
      roleEnvironment: {},
    });
  }
  for (const kind of ['instance-restart-worker', 'masakari-api', 'masakari-engine'] as const)
    definitions.push(singleProcessWorker(kind));
  return definitions;
}
