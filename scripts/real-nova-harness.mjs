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

function installed(keystone) {
  const modules = [
    'nova',
    'placement',
    'glance',
    'neutron',
    'pymysql',
    'gunicorn',
    ...(keystone ? ['keystone', 'keystonemiddleware'] : []),
  ];
  const python = spawnSync('/usr/bin/python3', ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' });
  const tools = spawnSync('sh', ['-c', 'command -v mariadbd && command -v jq'], { stdio: 'ignore' });
  return python.status === 0 && tools.status === 0;
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
      return { stop: async () => {}, values: found(values) };
    }
  }

  const keystone = env.RN_KEYSTONE === '1';
  if (!installed(keystone)) {
    if (process.getuid?.() !== 0) {
      return nothing(
        `the harness's Debian packages are missing and this is not root: run ${harness}/install.sh as root`,
      );
    }
    const started = Date.now();
    log('installing the harness packages (apt-get, about a minute the first time)');
    const code = await runLogged(join(harness, 'install.sh'), env, `${state}-install.log`);
    if (code !== 0) {
      return nothing(
        `install.sh failed (exit ${code}); see ${state}-install.log`,
        `; its last lines:\n${tail(`${state}-install.log`)}`,
      );
    }
    log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

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
