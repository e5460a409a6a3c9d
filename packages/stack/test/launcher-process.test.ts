import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import { PACKAGE_REPOSITORY_ROOT } from '../src/index.ts';
import {
  processExists,
  processesWithEnvironment,
  type StackBed,
  stackBedsForFile,
  unusedListenPort,
  waitForProcessesToEnd,
} from './support/stack-bed.ts';

const LAUNCHER = join('packages', 'stack', 'dist', 'main.js');

/** `node packages/stack/dist/main.js` (what `npm start` runs after the build) with its output kept. */
class Launcher {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly child: ChildProcess,
    readonly bed: StackBed,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  static start(bed: StackBed, env: Record<string, string> = {}, args: string[] = []): Launcher {
    const child = spawn(process.execPath, [LAUNCHER, ...args], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: bed.launcherEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Launcher(child, bed);
  }

  /**
   * The launcher under `sh -c`, as npm runs `npm start` (a command after it keeps the shell from
   * replacing itself with node): `child` is the shell.
   */
  static startUnderShell(bed: StackBed): Launcher {
    const child = spawn('/bin/sh', ['-c', `"${process.execPath}" ${LAUNCHER}; exit $?`], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: bed.launcherEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Launcher(child, bed);
  }

  /**
   * The launcher as `npm start` runs it: a parent standing in for npm (npm_lifecycle_event set) runs
   * `sh -c` which runs the launcher; as npm does, the parent passes a SIGTERM on to the shell and
   * exits, so both of the launcher's ancestors end at about the same time.
   */
  static startUnderNpm(bed: StackBed): Launcher {
    const npm = `
      const { spawn } = require('node:child_process');
      const shell = spawn('/bin/sh', ['-c', process.argv[1] + '; exit $?'], { stdio: 'inherit' });
      process.on('SIGTERM', () => { shell.kill('SIGTERM'); process.exit(143); });
      shell.on('exit', (code) => process.exit(code ?? 1));
    `;
    const child = spawn(process.execPath, ['-e', npm, `"${process.execPath}" ${LAUNCHER}`], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: { ...bed.launcherEnvironment(), npm_lifecycle_event: 'start' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new Launcher(child, bed);
  }

  /** The pid of the launcher process (stack.json, once ready). */
  launcherPid(): number {
    return JSON.parse(readFileSync(join(this.bed.stateDirectory, 'stack.json'), 'utf8')).pid;
  }

  /** The messages the launcher itself logged (`worker` "stack"), in order. */
  stackMessages(): string[] {
    return this.records()
      .filter((record) => record.service === undefined && record.instance === undefined)
      .map((record) => String(record.msg));
  }

  /** The JSON records of the output (`--log-format json`). */
  records(): Array<Record<string, unknown>> {
    return this.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Waits for stack.json, written once every worker is ready, and returns the workers it lists. */
  async ready(): Promise<Array<{ name: string; pid: number; url: string }>> {
    const manifest = join(this.bed.stateDirectory, 'stack.json');
    let ready = false;
    await Promise.race([
      waitFor('the stack to be ready (stack.json)', () => existsSync(manifest), 90_000, 100).then(() => {
        ready = true;
      }),
      this.exited.then((exit) => {
        if (!ready)
          throw new Error(
            `the launcher exited (${JSON.stringify(exit)}) before it was ready:\n${this.stderr}`,
          );
      }),
    ]);
    return JSON.parse(readFileSync(manifest, 'utf8')).workers;
  }
}

const launchers: Launcher[] = [];
// Registered before the beds' hook, so every launcher is killed before the beds close.
after(() => {
  for (const launcher of launchers) {
    if (launcher.child.exitCode === null) launcher.child.kill('SIGKILL');
  }
});
const bed = stackBedsForFile(async (each) => {
  await waitForProcessesToEnd(
    'the stack processes to end',
    () => processesWithEnvironment('LIFEGUARD_REDIS_KEY_PREFIX', each.keyPrefix),
    30_000,
  );
});

describe('the launcher process (npm start)', () => {
  it('prints where everything listens and what to try, and on SIGTERM stops every worker gracefully and exits 0', async () => {
    const test = await bed('launcher-sigterm');
    const launcher = Launcher.start(test, {}, ['--evacuation-workers', '2']);
    launchers.push(launcher);
    const workers = await launcher.ready();
    assert.deepEqual(
      workers.map((worker) => worker.name),
      [
        'provisioning-blocks',
        'port-status',
        'node-monitor',
        'fencing-worker',
        'evacuation-worker-1',
        'evacuation-worker-2',
        'instance-restart-worker',
        'masakari-api',
        'masakari-engine',
      ],
    );
    // --log-format json (the bed's): the banner goes to stderr, stdout carries JSON lines only.
    await waitFor('the banner', () => launcher.stderr.includes('Stop everything with Ctrl-C.'));
    for (const worker of workers) {
      assert.ok(
        launcher.stderr.includes(`${worker.url}/healthz  /readyz  /metrics`),
        `${worker.name}'s URLs are printed`,
      );
    }
    assert.match(
      launcher.stderr,
      /lifeguard is running against a simulated cloud \(12 compute hosts, \d+ servers\)/,
    );
    assert.match(launcher.stderr, /Nova +http:\/\/127\.0\.0\.1:\d+\/compute\/v2\.1/);
    assert.match(launcher.stderr, /Redfish BMCs +https:\/\/127\.0\.0\.1:\d+\/redfish\/v1\/Systems\/<host>/);
    assert.match(launcher.stderr, /source .*env/);
    assert.match(launcher.stderr, /compute-03/);

    for (const line of launcher.stdout.split('\n').filter((each) => each !== ''))
      assert.doesNotThrow(() => JSON.parse(line), `a stdout line that is not JSON: ${line}`);
    launcher.child.kill('SIGTERM');
    const exit = await launcher.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    for (const worker of workers) assert.equal(processExists(worker.pid), false, `${worker.name} is gone`);
    const records = launcher.records();
    for (const worker of workers) {
      const instance = records.find(
        (record) => record.msg === 'shutdown complete' && String(record.instance).endsWith(`:${worker.name}`),
      );
      assert.ok(instance, `${worker.name} logged "shutdown complete"`);
    }
    assert.ok(!existsSync(join(test.stateDirectory, 'stack.json')));
  });

  it('when the launcher is killed with SIGKILL, its workers notice and shut themselves down', async () => {
    const test = await bed('launcher-sigkill');
    const launcher = Launcher.start(test);
    launchers.push(launcher);
    const workers = await launcher.ready();
    launcher.child.kill('SIGKILL');
    await launcher.exited;
    await waitForProcessesToEnd(
      'every orphaned worker to end',
      () => workers.map((worker) => worker.pid).filter(processExists),
      45_000,
    );
  });

  it('when its parent shell ends (npm start under sh -c, npm forwarding SIGTERM), the launcher stops every worker and exits', async () => {
    const test = await bed('launcher-orphaned');
    const launcher = Launcher.startUnderShell(test);
    launchers.push(launcher);
    const workers = await launcher.ready();
    const launcherPid = launcher.launcherPid();
    assert.notEqual(launcherPid, launcher.child.pid, 'the shell did not replace itself with the launcher');
    launcher.child.kill('SIGTERM');
    await launcher.exited;
    assert.equal(processExists(launcherPid), true, 'the launcher outlived its shell at first');
    await waitFor('the launcher to end', () => !processExists(launcherPid), 45_000, 200);
    for (const worker of workers) assert.equal(processExists(worker.pid), false, `${worker.name} is gone`);
    for (const worker of workers) {
      assert.ok(
        launcher
          .records()
          .some(
            (record) =>
              record.msg === 'shutdown complete' && String(record.instance).endsWith(`:${worker.name}`),
          ),
        `${worker.name} shut down gracefully`,
      );
    }
    assert.match(launcher.stderr, /the launcher's parent process \(pid \d+\) ended: stopping lifeguard/);
    assert.ok(!existsSync(join(test.stateDirectory, 'stack.json')), 'the stack stopped completely');
  });

  it('a SIGTERM to npm (which passes it to its shell and exits) stops the stack once: every worker shuts down gracefully', async () => {
    const test = await bed('launcher-npm-sigterm');
    const launcher = Launcher.startUnderNpm(test);
    launchers.push(launcher);
    const workers = await launcher.ready();
    const launcherPid = launcher.launcherPid();
    launcher.child.kill('SIGTERM');
    await launcher.exited;
    await waitFor('the launcher to end', () => !processExists(launcherPid), 45_000, 200);
    for (const worker of workers) assert.equal(processExists(worker.pid), false, `${worker.name} is gone`);
    const records = launcher.records();
    for (const worker of workers) {
      const own = (record: Record<string, unknown>) => String(record.instance).endsWith(`:${worker.name}`);
      assert.ok(
        records.some((record) => record.msg === 'shutdown complete' && own(record)),
        `${worker.name} shut down gracefully`,
      );
      assert.ok(
        !records.some((record) => /second signal/.test(String(record.msg)) && own(record)),
        `${worker.name} got no second signal`,
      );
    }
    assert.equal(
      launcher.stderr.match(/the launcher's parent process \(pid \d+\) ended: stopping lifeguard/g)?.length,
      1,
      'one stop for the two ancestors that ended',
    );
  });

  for (const signal of ['SIGINT', 'SIGHUP'] as const) {
    it(`${signal} to the launcher stops every worker and exits 0`, async () => {
      const test = await bed(`launcher-${signal.toLowerCase()}`);
      const launcher = Launcher.start(test);
      launchers.push(launcher);
      const workers = await launcher.ready();
      launcher.child.kill(signal);
      assert.deepEqual(await launcher.exited, { code: 0, signal: null });
      for (const worker of workers) assert.equal(processExists(worker.pid), false, `${worker.name} is gone`);
    });
  }

  it('restarts a worker that was killed, with a growing delay, up to --restart-attempts times; then leaves it down, and the environment file runs it by hand', async () => {
    const test = await bed('launcher-restarts');
    const launcher = Launcher.start(test, {}, ['--restart-attempts', '2']);
    launchers.push(launcher);
    const workers = await launcher.ready();
    let pid = workers.find((worker) => worker.name === 'fencing-worker')!.pid;
    for (const [attempt, delay] of [
      [1, 1],
      [2, 2],
    ] as const) {
      process.kill(pid, 'SIGKILL');
      const restarted = /^fencing-worker restarted \(pid (\d+)\) and ready$/;
      await waitFor(
        `restart ${attempt}`,
        () => launcher.stackMessages().filter((message) => restarted.test(message)).length === attempt,
        60_000,
        200,
      );
      assert.ok(
        launcher
          .stackMessages()
          .includes(
            `fencing-worker was ended by SIGKILL; restarting it in ${delay} s (restart ${attempt} of 2)`,
          ),
        launcher.stackMessages().join('\n'),
      );
      const newPid = Number(
        launcher
          .stackMessages()
          .filter((message) => restarted.test(message))
          .at(-1)!
          .match(restarted)![1],
      );
      assert.notEqual(newPid, pid);
      assert.equal(processExists(newPid), true);
      pid = newPid;
    }
    process.kill(pid, 'SIGKILL');
    await waitFor(
      'the launcher to give up on fencing-worker',
      () =>
        launcher
          .stackMessages()
          .some((message) =>
            /^fencing-worker was ended by SIGKILL; it is not restarted again: it ended 3 times in a row \(2 restarts allowed\)/.test(
              message,
            ),
          ),
      30_000,
      200,
    );
    for (const worker of workers.filter((each) => each.name !== 'fencing-worker'))
      assert.equal(processExists(worker.pid), true, `${worker.name} goes on`);

    // By hand, with the variables the stack gave it.
    const environmentFile = join(test.stateDirectory, 'workers', 'fencing-worker.env');
    const fileText = readFileSync(environmentFile, 'utf8');
    assert.match(fileText, /^export LIFEGUARD_FENCING_ALLOW_LOOPBACK='true'$/m);
    assert.match(fileText, /^export LIFEGUARD_UNSAFE_SHORT_INTERVALS='true'$/m);
    assert.match(fileText, /^export FENCING_CONFIG_PATH=/m);
    assert.doesNotMatch(fileText, /LIFEGUARD_STACK_|NODE_OPTIONS/);
    const command = fileText.match(/^# {3}(\(\. .* && exec node .*\))$/m)![1]!;
    const byHand = spawn('/bin/sh', ['-c', command], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: the shell and the worker it runs are signalled together
    });
    let byHandOutput = '';
    byHand.stdout.on('data', (chunk: Buffer) => (byHandOutput += chunk.toString('utf8')));
    const byHandEnded = new Promise((resolve) => byHand.on('close', resolve));
    try {
      await waitFor(
        'fencing-worker run by hand to start',
        () => byHandOutput.includes('"fencing-worker started"'),
        30_000,
        200,
      );
    } finally {
      process.kill(-byHand.pid!, 'SIGTERM');
    }
    await byHandEnded;
    assert.match(byHandOutput, /"msg":"shutdown complete"/);

    launcher.child.kill('SIGTERM');
    assert.deepEqual(await launcher.exited, { code: 0, signal: null });
    const messages = launcher.stackMessages();
    assert.ok(
      messages.includes('fencing-worker was not running: it was ended by SIGKILL earlier'),
      messages.join('\n'),
    );
    assert.ok(!messages.some((message) => message.includes('had to be killed')), messages.join('\n'));
  });

  it("restarts the console when it is killed, with the workers' restart policy and messages; it is not listed as a worker", async () => {
    const test = await bed('launcher-console-restart');
    const consolePort = await unusedListenPort();
    const launcher = Launcher.start(test, { LIFEGUARD_STACK_CONSOLE_PORT: String(consolePort) }, [
      '--restart-attempts',
      '1',
    ]);
    launchers.push(launcher);
    const workers = await launcher.ready();
    assert.equal(
      workers.some((worker) => worker.name === 'console'),
      false,
      'stack.json (what lifeguard status reads) lists workers only',
    );
    const url = `http://127.0.0.1:${consolePort}/`;
    await waitFor('the console URL printed', () => launcher.stderr.includes(`Console: ${url}`), 60_000, 200);
    const consolePids = () => processesWithEnvironment('LIFEGUARD_HTTP_PORT', String(consolePort));
    const [first] = consolePids();
    assert.ok(first, 'the console process is found by its port');
    process.kill(first, 'SIGKILL');
    const restarted = /^console restarted \(pid (\d+)\) and ready$/;
    await waitFor(
      'the console restarted',
      () => launcher.stackMessages().some((message) => restarted.test(message)),
      60_000,
      200,
    );
    assert.ok(
      launcher
        .stackMessages()
        .includes('console was ended by SIGKILL; restarting it in 1 s (restart 1 of 1)'),
      launcher.stackMessages().join('\n'),
    );
    const second = Number(
      launcher
        .stackMessages()
        .find((message) => restarted.test(message))!
        .match(restarted)![1],
    );
    assert.notEqual(second, first);
    assert.equal(
      (await fetch(`${url}healthz`)).status,
      200,
      'the restarted console answers on the same port',
    );

    process.kill(second, 'SIGKILL');
    await waitFor(
      'the launcher to give up on the console',
      () =>
        launcher
          .stackMessages()
          .some((message) =>
            /^console was ended by SIGKILL; it is not restarted again: it ended 2 times in a row \(1 restarts allowed\)/.test(
              message,
            ),
          ),
      30_000,
      200,
    );
    for (const worker of workers) assert.equal(processExists(worker.pid), true, `${worker.name} goes on`);
    launcher.child.kill('SIGTERM');
    assert.deepEqual(await launcher.exited, { code: 0, signal: null });
  });

  it('exits 69 at once with the broker, its address and how to start it when RabbitMQ cannot be reached', async () => {
    const test = await bed('launcher-no-rabbit');
    const port = await unusedListenPort();
    const launcher = Launcher.start(test, {
      LIFEGUARD_AMQP_URL: `amqp://guest:secret-pw@127.0.0.1:${port}/`,
    });
    launchers.push(launcher);
    const exit = await launcher.exited;
    assert.deepEqual(exit, { code: 69, signal: null });
    assert.match(
      launcher.stderr,
      new RegExp(`RabbitMQ is not reachable at amqp://guest:\\*\\*\\*@127\\.0\\.0\\.1:${port}/`),
    );
    assert.match(launcher.stderr, /docker compose up -d rabbitmq redis/);
    assert.doesNotMatch(launcher.stderr + launcher.stdout, /secret-pw/);
    assert.equal(existsSync(join(test.stateDirectory, 'clouds.yaml')), false);
  });

  it('exits 78 saying the credentials were refused, not "start it", when RabbitMQ refuses the password', async () => {
    const test = await bed('launcher-amqp-password');
    const url = new URL(test.vhost.url);
    url.password = 'secret-wrong-pw';
    const launcher = Launcher.start(test, { LIFEGUARD_AMQP_URL: url.toString() });
    launchers.push(launcher);
    assert.deepEqual(await launcher.exited, { code: 78, signal: null });
    assert.match(
      launcher.stderr,
      /lifeguard cannot start: RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/t-launcher-amqp-password-\w+ refused the user name "guest" and password in LIFEGUARD_AMQP_URL: ACCESS_REFUSED/,
    );
    assert.doesNotMatch(launcher.stderr, /not reachable|systemctl start/);
    assert.doesNotMatch(launcher.stderr + launcher.stdout, /secret-wrong-pw/);
  });

  it("exits 78 naming LIFEGUARD_REDIS_URL and Redis's answer when Redis refuses the database (/99)", async () => {
    const test = await bed('launcher-redis-db');
    const launcher = Launcher.start(test, { LIFEGUARD_REDIS_URL: 'redis://127.0.0.1:6379/99' });
    launchers.push(launcher);
    assert.deepEqual(await launcher.exited, { code: 78, signal: null });
    assert.match(
      launcher.stderr,
      /lifeguard cannot start: Redis at redis:\/\/127\.0\.0\.1:6379\/99 refused database 99 in LIFEGUARD_REDIS_URL: SELECT 99: ERR DB index is out of range/,
    );
  });

  it('npm start (scripts/start.mjs) stops before building when a broker does not answer, saying which and how to start it', async () => {
    const test = await bed('launcher-start-script');
    const port = await unusedListenPort();
    const child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: PACKAGE_REPOSITORY_ROOT,
      env: test.launcherEnvironment({ LIFEGUARD_REDIS_URL: `redis://127.0.0.1:${port}/0` }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const launcher = new Launcher(child, test);
    launchers.push(launcher);
    assert.deepEqual(await launcher.exited, { code: 69, signal: null });
    assert.match(
      launcher.stderr,
      new RegExp(`Redis is not reachable at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`),
    );
    assert.match(launcher.stderr, /systemctl start redis-server/);
    assert.match(launcher.stderr, /docker compose up -d rabbitmq redis/);
    assert.doesNotMatch(launcher.stderr, /RabbitMQ is not reachable/);
    assert.doesNotMatch(launcher.stdout + launcher.stderr, /turbo run build/, 'nothing was built');
  });

  it('exits 78 naming the port when a health port is taken', async () => {
    const test = await bed('launcher-port');
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const launcher = Launcher.start(test, {
        LIFEGUARD_STACK_HTTP_PORT_BASE: String(port),
        LIFEGUARD_STACK_CLOUD_SIM_PORT: '0',
        LIFEGUARD_STACK_REDFISH_PORT: '0',
      });
      launchers.push(launcher);
      const exit = await launcher.exited;
      assert.deepEqual(exit, { code: 78, signal: null });
      assert.match(launcher.stderr, new RegExp(`already in use: (.*, )?${port} \\(provisioning-blocks\\)`));
    } finally {
      blocker.close();
    }
  });
});
