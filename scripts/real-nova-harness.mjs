// Starts the project's real-Nova harness (test/harness/real-nova) for the test runner when a selected
// test file needs it (*.real-nova.test.ts, *.real-keystone.test.ts), reuses one that is already
// running in the same RN_STATE, exports its env.sh to the test processes, and stops it at the end
// only if it was started here.
//
// Honours every harness setting from the environment: RN_STATE, RN_NOVA_PORT, RN_PLACEMENT_PORT,
// RN_GLANCE_PORT, RN_NEUTRON_PORT, RN_DB_PORT, RN_KEYSTONE_PORT, RN_KEYSTONE_NOVA_PORT,
// RN_RABBIT_* (host, port, user, pass, vhost), RN_COMPUTES, ... (test/harness/real-nova/lib.sh).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `export KEY=VALUE  # comment` lines of env.sh as an object. */
export function parseEnvFile(text) {
  const values = {};
  for (const line of text.split('\n')) {
    const match = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (!match) continue;
    let value = match[2].trim();
    if (value.startsWith('"')) value = value.slice(1, value.indexOf('"', 1));
    else value = value.replace(/\s+#.*$/, '');
    values[match[1]] = value;
  }
  return values;
}

async function answers(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * The Python modules the harness runs its services from, each with the Debian package that brings it
 * (test/harness/real-nova/install.sh installs them): Nova, Placement, Glance, Neutron, the database
 * driver and gunicorn; and the programs it runs.
 */
export const HARNESS_MODULES = {
  nova: 'python3-nova',
  placement: 'python3-placement',
  glance: 'python3-glance',
  neutron: 'python3-neutron',
  pymysql: 'python3-pymysql',
  gunicorn: 'python3-gunicorn',
};
const HARNESS_PROGRAMS = { mariadbd: 'mariadb-server', jq: 'jq' };
/**
 * What the harness's Keystone part (RN_KEYSTONE=1) runs from. python3-keystone depends on
 * python3-openstackclient: removing the client removes Keystone, while a harness started with it
 * keeps running and is reused.
 */
export const KEYSTONE_MODULES = {
  keystone: 'python3-keystone',
  keystonemiddleware: 'python3-keystonemiddleware',
};

// Prints each module named on the command line that Python cannot find (none: prints nothing).
const FIND_MODULES = `import importlib.util, sys
for name in sys.argv[1:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except ImportError:
        found = False
    if not found:
        print(name)`;

/**
 * The Debian packages of the harness, and of its Keystone part when `keystone`, that this machine
 * lacks: a module /usr/bin/python3 cannot find (as `env` sets it up) or a program not on its PATH.
 */
export function missingHarnessPackages(keystone, env = process.env) {
  const modules = { ...HARNESS_MODULES, ...(keystone ? KEYSTONE_MODULES : {}) };
  const python = spawnSync('/usr/bin/python3', ['-c', FIND_MODULES, ...Object.keys(modules)], {
    env,
    encoding: 'utf8',
  });
  const missing =
    python.status === 0
      ? python.stdout
          .split('\n')
          .filter((name) => name in modules)
          .map((name) => modules[name])
      : Object.values(modules);
  for (const [program, name] of Object.entries(HARNESS_PROGRAMS)) {
    const found = spawnSync('sh', ['-c', `command -v ${program}`], { env, stdio: 'ignore' });
    if (found.status !== 0) missing.push(name);
  }
  return [...new Set(missing)];
}

/**
 * Provides the Debian packages a harness about to be started or reused needs (its Keystone part's
 * too with `keystone`): as root, install.sh installs the missing ones (with RN_KEYSTONE=1 for
 * Keystone's), as the test runner installs its other packages; otherwise it says which are missing.
 * @param options.isRoot, options.install how root is told and install.sh run (tests give their own)
 * @returns null when nothing is missing (any more), else `{ reason, details }`
 */
export async function provideHarnessPackages(options) {
  const { keystone, env, harness, state, log } = options;
  const isRoot = options.isRoot ?? (() => process.getuid?.() === 0);
  const installLog = `${state}-install.log`;
  const install =
    options.install ?? ((installEnv) => runLogged(join(harness, 'install.sh'), installEnv, installLog));
  const missing = missingHarnessPackages(keystone, env);
  if (missing.length === 0) return null;
  const part = keystone ? 'the harness and its Keystone need' : 'the harness needs';
  const installSh = `${harness}/install.sh${keystone ? ' with RN_KEYSTONE=1' : ''}`;
  if (!isRoot()) {
    return {
      reason: `Debian packages ${part} are missing (${missing.join(', ')}) and this is not root: run ${installSh} as root, or: sudo apt-get install ${missing.join(' ')}`,
      details: '',
    };
  }
  const started = Date.now();
  log(`installing ${missing.join(', ')}, which ${part} (install.sh; about a minute the first time)`);
  const code = await install({ ...env, ...(keystone ? { RN_KEYSTONE: '1' } : {}) });
  const details = `; its last lines:\n${tail(installLog)}`;
  if (code !== 0) return { reason: `install.sh failed (exit ${code}); see ${installLog}`, details };
  const still = missingHarnessPackages(keystone, env);
  if (still.length > 0)
    return { reason: `install.sh did not provide ${still.join(', ')}; see ${installLog}`, details };
  log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return null;
}

function runLogged(script, env, logPath) {
  return new Promise((resolve) => {
    const output = createWriteStream(logPath, { flags: 'a' });
    const child = spawn(script, [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(output, { end: false });
    child.stderr.pipe(output, { end: false });
    // Resolved once the log is written out: a caller reads its last lines at once.
    child.on('close', (code) => output.end(() => resolve(code ?? 1)));
  });
}

function tail(path, lines = 40) {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** The harness ports a second, third, ... harness moves by, from the first one's (8774 → 18774, ...). */
const PORT_STEP = 10_000;
const PORT_SETTINGS = {
  RN_NOVA_PORT: 8774,
  RN_PLACEMENT_PORT: 8778,
  RN_GLANCE_PORT: 9292,
  RN_NEUTRON_PORT: 9696,
  RN_DB_PORT: 13306,
  RN_KEYSTONE_PORT: 5000,
};

/** How many harnesses can run side by side: a third's ports (33306, ...) would fall in the ephemeral range. */
export const MOST_HARNESSES = 2;

/**
 * The settings of harness number `number` (1 or 2) beside the first: the first is the one the
 * environment describes (RN_STATE, RN_*_PORT, RN_RABBIT_VHOST, or their defaults); harness 2 has the
 * state folder `<RN_STATE>-2`, the vhost `<RN_RABBIT_VHOST>-2` and every port moved by 10000, below
 * the ephemeral range the operating system gives out. Pure: `environment` is not changed.
 */
export function harnessSettings(number, environment = process.env) {
  if (!Number.isInteger(number) || number < 1 || number > MOST_HARNESSES) {
    throw new RangeError(`a real-Nova harness number is 1 to ${MOST_HARNESSES} (got ${number})`);
  }
  if (number === 1) return {};
  const shift = (number - 1) * PORT_STEP;
  // An empty setting is the default, as lib.sh reads it.
  const setting = (key) =>
    environment[key] === undefined || environment[key] === '' ? undefined : environment[key];
  const settings = {
    RN_STATE: `${(setting('RN_STATE') ?? '/tmp/real-nova').replace(/\/+$/, '')}-${number}`,
    RN_RABBIT_VHOST: `${setting('RN_RABBIT_VHOST') ?? 'real-nova'}-${number}`,
  };
  for (const [key, fallback] of Object.entries(PORT_SETTINGS)) {
    settings[key] = String(Number(setting(key) ?? fallback) + shift);
  }
  if (setting('RN_KEYSTONE_NOVA_PORT') !== undefined) {
    settings.RN_KEYSTONE_NOVA_PORT = String(Number(setting('RN_KEYSTONE_NOVA_PORT')) + shift);
  }
  return settings;
}

/**
 * Makes sure a harness is running and returns `{ stop, values }`: `values` are the variables its test
 * processes need (its settings and env.sh), or null when it could not be had. On failure it prints
 * why and returns it as `reason` (and, with exportValues, sets RN_UNAVAILABLE to it: each real-Nova
 * test then fails with that reason).
 * @param options.keystone also start Keystone (RN_KEYSTONE=1) with a second nova-api behind it
 * @param options.settings settings over the environment's (harnessSettings(n) for a further harness)
 * @param options.exportValues also set `values` in process.env, for every child of this process
 *   (default true; false for a further harness, whose values go to the processes given them)
 * @param options.label how log lines name it (default "real-nova")
 * @param options.isRoot, options.install passed to provideHarnessPackages (tests give their own)
 */
export async function ensureRealNova(root, options = {}) {
  const { keystone: wantKeystone = false, settings = {}, exportValues = true, label = 'real-nova' } = options;
  const log = (message) => process.stdout.write(`[${label}] ${message}\n`);
  const harness = join(root, 'test/harness/real-nova');
  const env = { ...process.env, ...settings };
  if (wantKeystone && env.RN_KEYSTONE === undefined) env.RN_KEYSTONE = '1';
  if (env.RN_KEYSTONE === '1' && env.RN_KEYSTONE_NOVA_PORT === undefined) {
    env.RN_KEYSTONE_NOVA_PORT = String(Number(env.RN_NOVA_PORT ?? 8774) + 1);
  }
  const state = env.RN_STATE || '/tmp/real-nova';
  env.RN_STATE = state;
  const envFile = join(state, 'env.sh');
  /**
   * No harness: says why, and tells this process's test files (RN_UNAVAILABLE, read by
   * test/e2e/support/real-nova.ts) so that each real-Nova test fails with the reason.
   */
  const nothing = (reason, details = '') => {
    log(`${reason}${details}`);
    if (exportValues) process.env.RN_UNAVAILABLE = reason;
    return { stop: async () => {}, values: null, reason };
  };
  const found = (values) => {
    const all = { ...settings, RN_STATE: state, ...values };
    if (env.RN_KEYSTONE !== undefined) all.RN_KEYSTONE = env.RN_KEYSTONE;
    if (env.RN_KEYSTONE_NOVA_PORT !== undefined) all.RN_KEYSTONE_NOVA_PORT = env.RN_KEYSTONE_NOVA_PORT;
    if (exportValues) Object.assign(process.env, env, values);
    return all;
  };

  if (existsSync(envFile) && existsSync(join(state, 'pids'))) {
    const values = parseEnvFile(readFileSync(envFile, 'utf8'));
    if (values.NOVA_URL && (await answers(values.NOVA_URL))) {
      log(`reusing the harness running in ${state} (${values.NOVA_URL})`);
      if (wantKeystone && !values.KEYSTONE_URL) {
        log(
          `WARNING: it runs without Keystone; the *.real-keystone tests need RN_KEYSTONE=1 (stop it with ${harness}/stop.sh)`,
        );
      }
      // A running harness outlives its packages: the tests still run its Python (compute.sh, Keystone).
      const lacking = await provideHarnessPackages({
        keystone: wantKeystone,
        env,
        harness,
        state,
        log,
        isRoot: options.isRoot,
        install: options.install,
      });
      if (lacking) return nothing(lacking.reason, lacking.details);
      return { stop: async () => {}, values: found(values) };
    }
  }

  const keystone = env.RN_KEYSTONE === '1';
  const lacking = await provideHarnessPackages({
    keystone,
    env,
    harness,
    state,
    log,
    isRoot: options.isRoot,
    install: options.install,
  });
  if (lacking) return nothing(lacking.reason, lacking.details);

  const started = Date.now();
  const logPath = `${state}-start.log`;
  log(`starting the harness in ${state}${keystone ? ' with Keystone' : ''} (log: ${logPath})`);
  const code = await runLogged(join(harness, 'start.sh'), env, logPath);
  if (code !== 0 || !existsSync(envFile)) {
    const lines = tail(logPath);
    const last =
      lines
        .split('\n')
        .filter((line) => line.trim() !== '')
        .at(-1) ?? '(no log)';
    const other = /harness already running/.test(lines)
      ? `; another harness holds ${state} and its ports (a second test run on this machine? wait for it, or stop it with ${harness}/stop.sh)`
      : '';
    return nothing(
      `start.sh failed (exit ${code}): ${last}${other}; see ${logPath}`,
      `; its last lines:\n${lines}`,
    );
  }
  log(`harness started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const values = found(parseEnvFile(readFileSync(envFile, 'utf8')));

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const begin = Date.now();
    await runLogged(join(harness, 'stop.sh'), env, `${state}-stop.log`);
    log(`harness stopped in ${((Date.now() - begin) / 1000).toFixed(1)} s`);
  };
  const onSignal = (signal) => {
    stopped = true;
    try {
      execFileSync(join(harness, 'stop.sh'), [], { env, stdio: 'ignore' });
    } finally {
      process.kill(process.pid, signal);
    }
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return { stop, values };
}

// `node scripts/real-nova-harness.mjs settings N` prints harness N's settings as shell `export`
// lines (nothing for harness 1), for scripts that start or stop it with the harness's own
// start.sh / stop.sh (.ci/run).
if (process.argv[1] === import.meta.filename) {
  const [command, argument] = process.argv.slice(2);
  const number = /^[0-9]+$/.test(argument ?? '') ? Number(argument) : Number.NaN;
  if (command !== 'settings' || !(number >= 1 && number <= MOST_HARNESSES)) {
    process.stderr.write(
      `usage: real-nova-harness.mjs settings <harness number, 1 to ${MOST_HARNESSES}> (got "${process.argv.slice(2).join(' ')}")\n`,
    );
    process.exit(64);
  }
  for (const [key, value] of Object.entries(harnessSettings(number))) {
    process.stdout.write(`export ${key}='${value}'\n`);
  }
}
