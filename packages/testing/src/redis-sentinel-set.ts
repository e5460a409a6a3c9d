import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { askRedis, closedPort, startServer, stopServer } from './redis-server.ts';
import { waitFor } from './wait-for.ts';

/** A master, its replicas and a set of Sentinels watching them, all of a test's own. */
export interface PrivateSentinelSet {
  /** The master group's name (LIFEGUARD_REDIS_SENTINEL_NAME). */
  readonly masterName: string;
  /** `127.0.0.1:<port>,...` of the Sentinels (LIFEGUARD_REDIS_SENTINELS). */
  readonly sentinelList: string;
  /** `redis://127.0.0.1:<first master's port>/0`: with Sentinels only its password, db and TLS matter. */
  readonly url: string;
  /** The port of the master the Sentinels name now. */
  masterPort(): Promise<number>;
  /** SIGKILLs the data node on `port` (master or replica, by the pid this helper started). */
  killNode(port: number): Promise<void>;
  /** Waits until the Sentinels name a running master other than `formerPort` and it answers as master; returns its port. */
  waitForNewMaster(formerPort: number, timeoutMilliseconds?: number): Promise<number>;
  /**
   * Starts every data node killNode stopped again, empty, as a replica of the master the Sentinels
   * name now, and waits until that master counts each as an online replica and every Sentinel knows
   * the replicas; returns the master's port.
   */
  restartKilledAsReplicas(timeoutMilliseconds?: number): Promise<number>;
  /** The ports of the replicas the master on `masterPort` reports online (INFO replication). */
  onlineReplicas(masterPort: number): Promise<number[]>;
  /** Stops every process (SIGKILL, by pid) and removes the folders. */
  stop(): Promise<void>;
}

export interface PrivateSentinelSetOptions {
  readonly masterName?: string;
  /** Sentinels (default 3; quorum is a majority of them). */
  readonly sentinels?: number;
  /** Replicas of the master (default 1). */
  readonly replicas?: number;
  /** `down-after-milliseconds`: how long the master may be silent before the Sentinels fail it over (default 1000). */
  readonly downAfterMilliseconds?: number;
}

/** Writes the configuration of the Sentinel on `port` (it rewrites the file as it learns) and returns its path. */
function writeSentinelConfig(
  directory: string,
  port: number,
  masterName: string,
  masterPort: number,
  settings: { quorum: number; downAfterMilliseconds: number },
): string {
  const config = join(directory, `sentinel-${port}.conf`);
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${directory}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} ${settings.quorum}`,
      `sentinel down-after-milliseconds ${masterName} ${settings.downAfterMilliseconds}`,
      `sentinel failover-timeout ${masterName} 5000`,
      `sentinel parallel-syncs ${masterName} 1`,
      '',
    ].join('\n'),
  );
  return config;
}

/** Whether every Sentinel on `ports` sees `replicas` replicas and all the other Sentinels. */
async function sentinelsAgree(ports: ReadonlyArray<number>, replicas: number): Promise<boolean> {
  for (const port of ports) {
    const [master] = (await askRedis(port, (client) => client.call('SENTINEL', 'MASTERS'))) as string[][];
    const field = (name: string) => Number(master?.[master.indexOf(name) + 1] ?? -1);
    if (field('num-slaves') < replicas || field('num-other-sentinels') < ports.length - 1) return false;
  }
  return true;
}

/** The ports of the replicas the master on `masterPort` lists with `state=online`. */
async function onlineReplicasOf(masterPort: number): Promise<number[]> {
  const info = await askRedis(masterPort, (client) => client.info('replication'));
  return [...info.matchAll(/^slave\d+:.*\bport=(\d+),state=online/gm)].map((match) => Number(match[1]));
}

/** The port of the master the first running Sentinel names. @throws Error when none names one */
async function masterNamedBySentinels(
  sentinels: ReadonlyArray<{ port: number; child: ChildProcess }>,
  masterName: string,
): Promise<number> {
  for (const { port, child } of sentinels) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const address = (await askRedis(port, (client) =>
      client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName),
    ).catch(() => null)) as [string, string] | null;
    if (address) return Number(address[1]);
  }
  throw new Error('no Sentinel names a master');
}

/** Waits until `masterPort()` names a port other than `formerPort` that answers ROLE as master; returns it. */
function waitForMasterOtherThan(
  masterPort: () => Promise<number>,
  formerPort: number,
  timeoutMilliseconds: number,
): Promise<number> {
  return waitFor(
    `a master other than ${formerPort}`,
    async () => {
      const port = await masterPort().catch(() => formerPort);
      if (port === formerPort) return false;
      const role = (await askRedis(port, (client) => client.role()).catch(() => null)) as unknown[] | null;
      return role?.[0] === 'master' ? port : false;
    },
    timeoutMilliseconds,
    100,
  );
}

/** Waits until the master on `master` lists every port of `replicas` online and the Sentinels agree. */
async function waitForReplicas(
  master: number,
  replicas: ReadonlyArray<number>,
  sentinelPorts: ReadonlyArray<number>,
  replicaCount: number,
  timeoutMilliseconds: number,
): Promise<void> {
  await waitFor(
    `${replicas.join(', ')} online replicas of ${master}, known to every Sentinel`,
    async () => {
      const online = await onlineReplicasOf(master);
      return replicas.every((port) => online.includes(port)) && sentinelsAgree(sentinelPorts, replicaCount);
    },
    timeoutMilliseconds,
    100,
  );
}

/**
 * Starts a master, `replicas` replicas (`--replicaof`) and `sentinels` Sentinels (quorum a majority,
 * `down-after-milliseconds` and a short failover timeout) on free loopback ports, each with its own
 * folder, no persistence; waits until every Sentinel knows the replicas and the other Sentinels.
 * Only the processes it started are ever stopped, by pid.
 * @throws Error when a process does not start or the Sentinels do not agree within 30 s
 */
export async function startPrivateSentinelSet(
  options: PrivateSentinelSetOptions = {},
): Promise<PrivateSentinelSet> {
  const masterName = options.masterName ?? 'lifeguard-test';
  const sentinelCount = options.sentinels ?? 3;
  const replicaCount = options.replicas ?? 1;
  const quorum = Math.floor(sentinelCount / 2) + 1;
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-sentinel-set-'));
  const data = new Map<number, ChildProcess>();
  const sentinels: Array<{ port: number; child: ChildProcess }> = [];
  const stop = async () => {
    await Promise.all([...data.values(), ...sentinels.map((s) => s.child)].map((child) => stopServer(child)));
    rmSync(directory, { recursive: true, force: true });
  };
  const dataArgs = (port: number, masterPort?: number) => [
    ...`--port ${port} --bind 127.0.0.1 --dir ${directory} --appendonly no`.split(' '),
    ...['--save', ''],
    ...(masterPort ? ['--replicaof', '127.0.0.1', String(masterPort)] : []),
  ];
  try {
    const firstMaster = await closedPort();
    data.set(firstMaster, await startServer(firstMaster, dataArgs(firstMaster)));
    for (let index = 0; index < replicaCount; index++) {
      const port = await closedPort();
      data.set(port, await startServer(port, dataArgs(port, firstMaster)));
    }
    for (let index = 0; index < sentinelCount; index++) {
      const port = await closedPort();
      const config = writeSentinelConfig(directory, port, masterName, firstMaster, {
        quorum,
        downAfterMilliseconds: options.downAfterMilliseconds ?? 1000,
      });
      sentinels.push({ port, child: await startServer(port, [config, '--sentinel']) });
    }
    const ports = sentinels.map(({ port }) => port);
    await waitFor(
      'every Sentinel knows the replicas and the other Sentinels',
      () => sentinelsAgree(ports, replicaCount),
      30_000,
      100,
    );
    const masterPort = () => masterNamedBySentinels(sentinels, masterName);
    return {
      masterName,
      sentinelList: sentinels.map(({ port }) => `127.0.0.1:${port}`).join(','),
      url: `redis://127.0.0.1:${firstMaster}/0`,
      masterPort,
      async killNode(port) {
        const child = data.get(port);
        if (!child) throw new Error(`port ${port} is not a data node of this set`);
        await stopServer(child);
      },
      waitForNewMaster: (formerPort, timeoutMilliseconds = 30_000) =>
        waitForMasterOtherThan(masterPort, formerPort, timeoutMilliseconds),
      async restartKilledAsReplicas(timeoutMilliseconds = 30_000) {
        const master = await masterPort();
        const killed = [...data].filter(([, child]) => child.exitCode !== null || child.signalCode !== null);
        for (const [port] of killed) data.set(port, await startServer(port, dataArgs(port, master)));
        const restarted = killed.map(([port]) => port);
        await waitForReplicas(master, restarted, ports, replicaCount, timeoutMilliseconds);
        return master;
      },
      onlineReplicas: onlineReplicasOf,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
