import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import type { CloudSim } from '@lifeguard/cloud-sim';
import { lifeguardEntryPoint, REDIS_URL } from '@lifeguard/testing';
import { type CliIo, runCli } from '../../src/index.ts';

/** What one run of the command printed and its exit status. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Standard output parsed as JSON (for `--json` runs). */
  json<Value = unknown>(): Value;
}

class Collected extends Writable {
  text = '';
  isTTY = false;
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

function finished(code: number, stdout: string, stderr: string): CliRun {
  return {
    code,
    stdout,
    stderr,
    json<Value>() {
      try {
        return JSON.parse(stdout) as Value;
      } catch (error) {
        throw new Error(`standard output is not JSON (${(error as Error).message}):\n${stdout}\n${stderr}`);
      }
    },
  };
}

/** Runs `lifeguard <argv>` in this process with captured output and the given environment. */
export async function lifeguard(argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<CliRun> {
  const stdout = new Collected();
  const stderr = new Collected();
  const stdin = new PassThrough();
  const io: CliIo = { stdout, stderr, stdin, env: { PATH: process.env.PATH, USER: 'test-operator', ...env } };
  const code = await runCli(argv, io);
  return finished(code, stdout.text, stderr.text);
}

/** Runs the `lifeguard` entry point as its own process (see lifeguardEntryPoint). */
export function lifeguardProcess(argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...lifeguardEntryPoint('cli'), ...argv],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, USER: 'test-operator', ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done(finished(code, stdout, stderr));
      },
    );
  });
}

/** A lifeguard worker running as its own process, with everything it printed. */
export interface WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Chunks of its standard output and standard error, in the order they arrived. */
  readonly output: string[];
  /** Sends SIGTERM and resolves once the process has exited (at once when it already had). */
  stop(): Promise<void>;
}

/**
 * Starts the worker of package `workerPackage` (packages/<workerPackage>, see lifeguardEntryPoint) as
 * instance `name`, on the test Redis, with an admin port the system chooses, info
 * logging and `env` (PATH and HOME are passed on).
 */
export function startWorkerProcess(
  workerPackage: string,
  name: string,
  env: NodeJS.ProcessEnv,
): WorkerProcess {
  const child = spawn(process.execPath, lifeguardEntryPoint(workerPackage), {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      LIFEGUARD_REDIS_URL: REDIS_URL,
      LIFEGUARD_HTTP_PORT: '0',
      LIFEGUARD_INSTANCE_NAME: name,
      LIFEGUARD_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return {
    name,
    child,
    output,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise((done) => child.once('exit', done));
      }
    },
  };
}

/** Environment variables pointing the CLI at a cloud-sim through a clouds.yaml of its own. */
export function cloudSimEnvironment(sim: CloudSim): NodeJS.ProcessEnv {
  const directory = mkdtempSync(join(tmpdir(), 'lifeguard-cli-cloud-'));
  const file = join(directory, 'clouds.yaml');
  const entry = sim.cloudEntry('admin_token');
  writeFileSync(file, JSON.stringify({ clouds: { sim: entry } }));
  return { OS_CLIENT_CONFIG_FILE: file, OS_CLOUD: 'sim', LIFEGUARD_CLOUD_SIM_URL: sim.urls.api };
}
