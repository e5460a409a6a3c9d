import { EventEmitter } from 'node:events';
import { rmSync } from 'node:fs';
import type { CloudSim } from '@lifeguard/cloud-sim';
import type { RedisClient } from '@lifeguard/runtime';
import type { DemoCloudLayout } from './demo-cloud.ts';
import { LogPrinter, type WorkerLogLine } from './log-output.ts';
import { checkBrokers, connectStackRedis, resetSimulatedState } from './preflight.ts';
import { startSimulatedCloud } from './simulated-cloud.ts';
import { prepareStateDirectory, SIMULATED_CLOUD_NAME, type StackFiles } from './stack-files.ts';
import {
  type ResolvedStackOptions,
  resolveStackOptions,
  type SimulatedCloudOptions,
  type StackOptions,
  stackRedis,
} from './stack-options.ts';
import {
  checkBuilt,
  checkStackPorts,
  createWorkerProcess,
  writeManifest,
  writeRunFiles,
} from './stack-start.ts';
import { workerDefinitions } from './worker-definitions.ts';
import {
  buildPackages,
  chooseHttpPorts,
  inheritedEnvironment,
  killAfterMilliseconds,
} from './worker-launch.ts';
import { describeExit, type WorkerExit, type WorkerProcess } from './worker-process.ts';
import { WorkerRestarts } from './worker-restarts.ts';

/** Events: `worker-exit` (worker: WorkerProcess, exit: WorkerExit, expected: boolean). */
export class Stack extends EventEmitter {
  private stopping: Promise<void> | null = null;
  private readonly restarts: WorkerRestarts<WorkerProcess>;
  /** When the stack was started (stack.json's `startedAt`). */
  readonly startedAt = new Date();

  constructor(
    readonly options: ResolvedStackOptions,
    /** Every worker process, in start order. */
    readonly workers: ReadonlyArray<WorkerProcess>,
    /** The simulated cloud, or null against a real one. */
    readonly cloudSim: CloudSim | null,
    /** Where the simulated hosts belong, or null. */
    readonly layout: DemoCloudLayout | null,
    readonly files: StackFiles,
    /** Milliseconds from startStack() until every worker was ready. */
    readonly startupMilliseconds: number,
    /** The launcher's own log lines (`worker: stack`). */
    readonly log: (level: 'info' | 'warn' | 'error', message: string) => void,
    /** The connection that finds free health ports in the worker registry, or null. */
    private readonly registryRedis: RedisClient | null = null,
  ) {
    super();
    this.restarts = new WorkerRestarts<WorkerProcess>(
      options.restartWorkers,
      (worker) => this.restartAfterExit(worker),
      log,
    );
  }

  get amqpUrl(): string {
    return this.options.amqpUrl;
  }

  get redisUrl(): string {
    return this.options.redisUrl;
  }

  get keyPrefix(): string {
    return this.options.keyPrefix;
  }

  /**
   * A worker by name (`node-monitor`, `evacuation-worker-2`, ...).
   * @throws RangeError for an unknown name
   */
  worker(name: string): WorkerProcess {
    const found = this.workers.find((worker) => worker.name === name);
    if (!found) {
      throw new RangeError(`no worker named ${name}; workers: ${this.workers.map((w) => w.name).join(', ')}`);
    }
    return found;
  }

  /**
   * The variables that point a lifeguard command (the CLI) at this stack: brokers, key prefix, the
   * cloud (and cloud-sim's URL), the configuration files.
   */
  clientEnvironment(): Record<string, string> {
    const { options, files } = this;
    const variables: Record<string, string> = {
      LIFEGUARD_AMQP_URL: options.amqpUrl,
      LIFEGUARD_REDIS_URL: options.redisUrl,
      ...options.redisTopology,
      LIFEGUARD_REDIS_KEY_PREFIX: options.keyPrefix,
      INSTANCEHA_CONFIG_PATH: files.configYaml,
      FENCING_CONFIG_PATH: files.fencingYaml,
    };
    if (options.cloud.kind === 'openstack') {
      variables.OS_CLOUD = options.cloud.cloudName;
      if (options.cloud.cloudsFile) variables.OS_CLIENT_CONFIG_FILE = options.cloud.cloudsFile;
    } else if (files.cloudsYaml && this.cloudSim) {
      variables.OS_CLIENT_CONFIG_FILE = files.cloudsYaml;
      variables.OS_CLOUD = SIMULATED_CLOUD_NAME;
      variables.LIFEGUARD_CLOUD_SIM_URL = this.cloudSim.urls.api;
    }
    return variables;
  }

  /** Starts a stopped (or crashed, or killed) worker again and waits until it is ready. */
  async restartWorker(name: string): Promise<WorkerProcess> {
    const worker = this.worker(name);
    if (worker.running) await worker.stop(killAfterMilliseconds(worker));
    worker.start();
    this.rewriteManifest();
    await worker.waitReady(this.options.readyTimeoutMilliseconds);
    this.log('info', `${name} restarted (pid ${worker.pid})`);
    return worker;
  }

  /** Handles a worker's unexpected exit with the stack's restart policy (WorkerRestarts). */
  workerEndedUnexpectedly(worker: WorkerProcess, exit: WorkerExit): void {
    this.restarts.workerEnded(worker, exit);
  }

  private async restartAfterExit(worker: WorkerProcess): Promise<void> {
    if (this.stopped || worker.running) return;
    worker.start();
    this.rewriteManifest();
    try {
      await worker.waitReady(this.options.readyTimeoutMilliseconds);
      this.log('info', `${worker.name} restarted (pid ${worker.pid}) and ready`);
    } catch (error) {
      // An exit during start-up is handled as any unexpected exit (the next attempt, or giving up).
      if (worker.running && !this.stopped)
        this.log(
          'warn',
          `${worker.name} restarted (pid ${worker.pid}) but not ready: ${(error as Error).message}`,
        );
    }
  }

  /** stack.json with the workers' pids as they are now (not once the stack is stopping: it removes it). */
  private rewriteManifest(): void {
    if (this.stopped) return;
    const { options, files, workers, cloudSim, startedAt } = this;
    writeManifest({ options, files, workers, cloudSim, startedAt });
  }

  /**
   * Stops every worker at once (SIGTERM; SIGKILL after its shutdown budget + 5 s), then cloud-sim; with
   * the simulated cloud, removes the run's Redis keys (they describe a cloud that no longer exists);
   * removes stack.json. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.log('info', 'stopping every worker (SIGTERM)');
      this.restarts.cancel();
      const exits = await Promise.all(
        this.workers.map(async (worker) => {
          const wasRunning = worker.running;
          return [worker, await worker.stop(killAfterMilliseconds(worker)), wasRunning] as const;
        }),
      );
      for (const [worker, exit, wasRunning] of exits) {
        if (!wasRunning) {
          if (worker.lastExit)
            this.log('warn', `${worker.name} was not running: it ${describeExit(exit)} earlier`);
        } else if (worker.hadToBeKilled) {
          this.log(
            'warn',
            `${worker.name} had to be killed: it had not ended ${killAfterMilliseconds(worker) / 1000} s after SIGTERM`,
          );
        } else if (exit.code !== 0) this.log('warn', `${worker.name} ${describeExit(exit)}`);
      }
      await this.cloudSim?.close();
      if (this.cloudSim) {
        // The simulated cloud is gone: its incidents, jobs and leases mean nothing any more.
        const removed = await resetSimulatedState(
          stackRedis(this.options),
          this.options.keyPrefix,
          'stop',
        ).catch((error: Error) => {
          this.log('warn', `could not remove the simulated run's Redis keys: ${error.message}`);
          return 0;
        });
        if (removed > 0) this.log('info', `removed ${removed} Redis keys of the simulated run`);
      }
      rmSync(this.files.manifest, { force: true });
      this.registryRedis?.disconnect();
      this.log('info', 'stopped');
    })();
    return this.stopping;
  }

  /** True once stop() was called. */
  get stopped(): boolean {
    return this.stopping !== null;
  }
}

/**
 * Starts lifeguard on this machine (see StackOptions): checks RabbitMQ and Redis (BrokerNotReachableError
 * saying how to start them) and the ports; with the simulated cloud, checks that no lifeguard consumes
 * the vhost (VhostInUseError), resets the stack's Redis keys (ForeignStateError when they are not the
 * stack's), starts cloud-sim with the demo layout and writes clouds.yaml, config.yaml and fencing.yaml
 * into the state directory; starts every worker as its own process and resolves once each answers 200
 * on /readyz (WorkerStartError otherwise, after stopping the others). Writes `env` and `stack.json`.
 * @throws StackConfigurationError, BuildFailedError, BrokerNotReachableError, VhostInUseError,
 *   ForeignStateError, WorkerStartError
 */
export async function startStack(input: StackOptions = {}): Promise<Stack> {
  const began = performance.now();
  const options = resolveStackOptions(input);
  const { emit, log } = stackLog(options);

  if (options.build) {
    log('info', 'building (turbo run build, cached)');
    await buildPackages(options.repositoryRoot);
  }
  const definitions = workerDefinitions(options.evacuationWorkers);
  checkBuilt(options, definitions);

  await checkBrokers(options.amqpUrl, stackRedis(options));
  const ports = chooseHttpPorts(options, definitions);
  const simulated = options.cloud.kind === 'simulated' ? options.cloud : null;
  const { simPort, redfishPort } = await checkStackPorts(options, definitions, ports, simulated);

  const { files, cloudSim, layout } = await prepareCloud(options, simulated, { simPort, redfishPort }, log);

  const base = inheritedEnvironment(options);
  const workers: WorkerProcess[] = [];
  let registryRedis: RedisClient | null = null;
  if (options.httpPorts === 'free') {
    try {
      registryRedis = await connectStackRedis(stackRedis(options), 'lifeguard-stack:registry');
    } catch (error) {
      await cloudSim?.close();
      throw error;
    }
  }
  let stack: Stack | null = null;
  const onExit = (worker: WorkerProcess, exit: WorkerExit) => {
    if (!stack) return;
    const expected = worker.expectedExit || stack.stopped;
    if (!expected) stack.workerEndedUnexpectedly(worker, exit);
    stack.emit('worker-exit', worker, exit, expected);
  };
  definitions.forEach((definition, index) => {
    workers.push(
      createWorkerProcess({
        options,
        definition,
        port: ports[index]!,
        inherited: base,
        files,
        simulated: simulated !== null,
        registryRedis,
        onLine: emit,
        onExit: (worker, exit) => onExit(worker, exit),
      }),
    );
  });

  try {
    for (const worker of workers) worker.start();
    await Promise.all(workers.map((worker) => worker.waitReady(options.readyTimeoutMilliseconds)));
  } catch (error) {
    log('error', 'start-up failed; stopping what was started');
    await Promise.all(workers.map((worker) => worker.stop(killAfterMilliseconds(worker))));
    await cloudSim?.close();
    // What the workers wrote before one of them failed belongs to a simulated run that never was.
    if (cloudSim) await resetSimulatedState(stackRedis(options), options.keyPrefix, 'stop').catch(() => 0);
    registryRedis?.disconnect();
    throw error;
  }
  stack = new Stack(options, workers, cloudSim, layout, files, performance.now() - began, log, registryRedis);
  writeRunFiles({
    options,
    files,
    workers,
    cloudSim,
    startedAt: stack.startedAt,
    clientEnvironment: stack.clientEnvironment(),
  });
  log('info', `every worker is ready (${(stack.startupMilliseconds / 1000).toFixed(1)} s)`);
  return stack;
}

/**
 * The launcher's log: `emit` prints a worker's line (and hands it to `onLogLine`), `log` prints the
 * launcher's own lines as worker `stack`.
 */
function stackLog(options: ResolvedStackOptions): {
  emit: (line: WorkerLogLine) => void;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
} {
  const printer = new LogPrinter(
    options.logFormat,
    options.logOutput,
    options.colour,
    Math.max(12, ...workerDefinitions(options.evacuationWorkers).map((each) => each.name.length)),
  );
  const emit = (line: WorkerLogLine) => {
    printer.print(line);
    options.onLogLine?.(line);
  };
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    const record = {
      level: { info: 30, warn: 40, error: 50 }[level],
      time: new Date().toISOString(),
      msg: message,
    };
    emit({ worker: 'stack', stream: 'stdout', text: JSON.stringify(record), record });
  };
  return { emit, log };
}

/** The state directory prepared and, with the simulated cloud, cloud-sim started with the demo layout. */
async function prepareCloud(
  options: ResolvedStackOptions,
  simulated: SimulatedCloudOptions | null,
  ports: { simPort: number; redfishPort: number },
  log: (level: 'info' | 'warn' | 'error', message: string) => void,
): Promise<{ files: StackFiles; cloudSim: CloudSim | null; layout: DemoCloudLayout | null }> {
  const files = prepareStateDirectory(
    options.stateDirectory,
    options.cloud.kind === 'openstack'
      ? { configYaml: options.cloud.instanceHaConfigPath, fencingYaml: options.cloud.fencingConfigPath }
      : null,
  );
  if (!simulated) return { files, cloudSim: null, layout: null };
  const { sim, layout } = await startSimulatedCloud({
    options,
    simulated,
    port: ports.simPort,
    redfishPort: ports.redfishPort,
    files,
    inheritedEnvironment: inheritedEnvironment(options),
    log,
  });
  return { files, cloudSim: sim, layout };
}
