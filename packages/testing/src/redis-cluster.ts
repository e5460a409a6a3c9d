import { type ChildProcess, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { askRedis, closedPort, startServer, stopServer } from './redis-server.ts';
import { waitFor } from './wait-for.ts';

const run = promisify(execFile);

/** One redis-server of a PrivateRedisCluster. */
export interface ClusterNodeProcess {
  readonly port: number;
  /** The pid of the running process (changes after restartNode). */
  readonly pid: number | undefined;
  /** Whether the process runs (not killed). */
  readonly running: boolean;
}

/** A Redis Cluster of a test's own: masters with replicas on loopback ports, own data folders. */
export interface PrivateRedisCluster {
  readonly nodes: ReadonlyArray<ClusterNodeProcess>;
  /** `127.0.0.1:<port>,...` of every node (LIFEGUARD_REDIS_CLUSTER_NODES). */
  readonly nodeList: string;
  /** The port of the master serving `key`'s slot, as a running node's CLUSTER SLOTS says. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port` (by the pid this helper started). */
  killNode(port: number): Promise<void>;
  /** Starts the killed node on `port` again with its own nodes.conf: it rejoins (a former master as a replica). */
  restartNode(port: number): Promise<void>;
  /** Waits until every running node says `cluster_state:ok` and `key`'s master is a running node; returns that master's port. */
  waitUntilServing(key: string, timeoutMilliseconds?: number): Promise<number>;
  /** Stops every node (SIGKILL, by pid) and removes the data folders. */
  stop(): Promise<void>;
}

export interface PrivateRedisClusterOptions {
  /** Masters (default 3). */
  readonly masters?: number;
  /** Replicas per master (default 1). */
  readonly replicasPerMaster?: number;
  /** `cluster-node-timeout`, milliseconds: how long a master may be silent before its replica takes over (default 2000). */
  readonly nodeTimeoutMilliseconds?: number;
}

/** The command line of one cluster node on `port`, its folder under `directory`. */
function clusterNodeArgs(directory: string, port: number, nodeTimeoutMilliseconds: number): string[] {
  const folder = join(directory, String(port));
  mkdirSync(folder, { recursive: true });
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    folder,
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(folder, 'nodes.conf'),
    '--cluster-node-timeout',
    String(nodeTimeoutMilliseconds),
    '--save',
    '',
    '--appendonly',
    'no',
  ];
}

/** Each node's port, pid and whether it runs. */
function nodeStatus(
  ports: ReadonlyArray<number>,
  processes: ReadonlyMap<number, ChildProcess>,
): ClusterNodeProcess[] {
  return ports.map((port) => {
    const child = processes.get(port);
    return {
      port,
      pid: child?.pid,
      running: child !== undefined && child.exitCode === null && child.signalCode === null,
    };
  });
}

/** Whether every node on `ports` answers CLUSTER INFO with `cluster_state:ok`. */
async function everyNodeOk(ports: ReadonlyArray<number>): Promise<boolean> {
  for (const port of ports) {
    const info = await askRedis(port, (client) => client.cluster('INFO')).catch(() => '');
    if (!String(info).includes('cluster_state:ok')) return false;
  }
  return true;
}

/** The port of the master serving `key`'s slot, as the node on `port` says (CLUSTER KEYSLOT, CLUSTER SLOTS). */
async function slotMaster(port: number, key: string): Promise<number> {
  return askRedis(port, async (client) => {
    const slot = Number(await client.cluster('KEYSLOT', key));
    const ranges = await client.cluster('SLOTS');
    const range = ranges.find(([first, last]) => slot >= first && slot <= last);
    const master = range?.[2];
    if (!master) throw new Error(`slot ${slot} has no master`);
    return Number(master[1]);
  });
}

/**
 * Starts a Redis Cluster on free loopback ports: `masters × (1 + replicasPerMaster)` redis-server
 * processes with `--cluster-enabled yes`, each with its own folder (nodes.conf, no persistence),
 * joined by `redis-cli --cluster create ... --cluster-replicas N --cluster-yes`; waits until every
 * node reports `cluster_state:ok`. Only the processes it started are ever stopped, by pid.
 * @throws Error when a node does not start or the cluster is not ok within 30 s
 */
export async function startPrivateRedisCluster(
  options: PrivateRedisClusterOptions = {},
): Promise<PrivateRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeout = options.nodeTimeoutMilliseconds ?? 2000;
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-redis-cluster-'));
  const processes = new Map<number, ChildProcess>();
  const args = (port: number) => clusterNodeArgs(directory, port, nodeTimeout);
  const stopAll = async () => {
    await Promise.all([...processes.values()].map((child) => stopServer(child)));
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let index = 0; index < masters * (1 + replicas); index++) {
      let port = await closedPort();
      while (ports.includes(port) || ports.includes(port - 10000) || port + 10000 > 65535)
        port = await closedPort();
      ports.push(port);
      processes.set(port, await startServer(port, args(port)));
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    const running = () =>
      ports.filter((port) => processes.get(port)?.exitCode === null && !processes.get(port)?.signalCode);
    const masterOf = async (key: string): Promise<number> => {
      const [port] = running();
      if (port === undefined) throw new Error('no node of the cluster is running');
      return slotMaster(port, key);
    };
    const waitUntilServing = async (key: string, timeoutMilliseconds = 30_000): Promise<number> => {
      let master = 0;
      await waitFor(
        `the cluster serves ${key}`,
        async () => {
          if (!(await everyNodeOk(running()))) return false;
          master = await masterOf(key).catch(() => 0);
          return running().includes(master);
        },
        timeoutMilliseconds,
        100,
      );
      return master;
    };
    await waitFor('every node says cluster_state:ok', () => everyNodeOk(ports), 30_000, 100);
    return {
      get nodes() {
        return nodeStatus(ports, processes);
      },
      nodeList: ports.map((port) => `127.0.0.1:${port}`).join(','),
      masterOf,
      async killNode(port) {
        const child = processes.get(port);
        if (!child) throw new Error(`port ${port} is not a node of this cluster`);
        await stopServer(child);
      },
      async restartNode(port) {
        processes.set(port, await startServer(port, args(port)));
      },
      waitUntilServing,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
