import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lifeguardEntryPoint, REDIS_URL, waitFor } from '@lifeguard/testing';

/** A node-monitor started as its own process (see lifeguardEntryPoint), with its JSON log lines captured. */
export interface MonitorProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: string[];
  /** The log records (parsed JSON lines). */
  records(): Array<Record<string, unknown>>;
  /** Waits for a log record whose `msg` matches. */
  waitForLog(pattern: RegExp, timeoutMilliseconds?: number): Promise<Record<string, unknown>>;
  /** The admin HTTP port, once listening. */
  adminPort(): Promise<number>;
  /** Waits (up to 120 seconds, polling every 200 milliseconds) until its /readyz answers 200. */
  ready(what?: string): Promise<void>;
  /** Resolves with the exit code (or signal). */
  readonly exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/** Writes a config.yaml with a `config:` mapping of the given keys. */
export function writeInstanceHaConfig(values: Record<string, string | number | boolean | string[]>): string {
  const directory = mkdtempSync(join(tmpdir(), 'node-monitor-config-'));
  const path = join(directory, 'config.yaml');
  const lines = Object.entries(values).map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`);
  writeFileSync(path, `config:\n${lines.join('\n')}\n`);
  return path;
}

export function startMonitorProcess(name: string, env: Record<string, string>): MonitorProcess {
  const child = spawn(process.execPath, lifeguardEntryPoint('node-monitor'), {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      LIFEGUARD_INSTANCE_NAME: name,
      LIFEGUARD_REDIS_URL: REDIS_URL,
      LIFEGUARD_HTTP_PORT: '0',
      LIFEGUARD_LOG_LEVEL: 'debug',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffer = '';
  const collect = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let index = buffer.indexOf('\n');
    while (index >= 0) {
      const line = buffer.slice(0, index).trim();
      if (line) lines.push(line);
      buffer = buffer.slice(index + 1);
      index = buffer.indexOf('\n');
    }
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | string>((resolveExit) =>
    child.on('exit', (code, signal) => resolveExit(code ?? signal ?? 'unknown')),
  );
  const records = () =>
    lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  // A wait on the process ends as soon as it has exited, with its last lines: a monitor that died
  // at start is reported as such, not as a timeout.
  const exitedBeforeIt = Symbol('exited');
  const whileRunning = async <Value>(
    what: string,
    probe: () => Value | undefined | Promise<Value | undefined>,
    timeoutMilliseconds: number,
    intervalMilliseconds?: number,
  ): Promise<Value> => {
    const found = await waitFor(
      what,
      async () => {
        const value = await probe();
        if (value !== undefined) return value;
        return child.exitCode !== null || child.signalCode !== null ? exitedBeforeIt : undefined;
      },
      timeoutMilliseconds,
      intervalMilliseconds,
    );
    if (found === exitedBeforeIt) {
      const how = child.exitCode ?? child.signalCode;
      throw new Error(
        `${name} exited (${how}) before ${what}; its last lines:\n${lines.slice(-20).join('\n')}`,
      );
    }
    return found as Value;
  };
  const adminPort = async () => {
    const record = await whileRunning(
      `${name}: the admin server`,
      () => records().find((each) => each.msg === 'health and metrics server listening'),
      90_000,
    );
    return Number(record.port);
  };
  return {
    name,
    child,
    lines,
    records,
    exited,
    waitForLog: (pattern, timeoutMilliseconds = 30_000) =>
      whileRunning(
        `${name}: a log line matching ${pattern}`,
        () => records().find((record) => pattern.test(String(record.msg ?? ''))),
        timeoutMilliseconds,
      ),
    adminPort,
    async ready(what = `${name} ready`) {
      const port = await adminPort();
      await whileRunning(
        what,
        async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined),
        120_000,
        200,
      );
    },
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
