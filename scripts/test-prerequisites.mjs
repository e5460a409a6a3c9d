// What the test suite needs from the machine, checked (and where possible provided) before the run:
// - the Debian packages whose programs the tests drive as real peers: python3-oslo.messaging and
//   python3-pika (a real oslo.messaging RPC client), fence-agents (fence_ipmilan, fence_redfish,
//   fence_kdump_send), openipmi (ipmi_sim) and ipmitool, prometheus (promtool checks and unit-tests
//   the alert rules), chromium (the console's browser tests), libvirt-clients and libvirt-daemon
//   (virsh and a private libvirtd with the test driver, for the instance monitor's tests),
//   python3-masakari, python3-masakariclient and python3-openstackclient (Masakari's own request
//   validator and the `openstack segment|notification` client the Masakari API is checked against),
//   masakari-process-monitor and masakari-instance-monitor with python3-libvirt (Masakari's monitors
//   driving lifeguard's Masakari API) — installed with apt-get when running as root;
// - Redis on 127.0.0.1:6379 (LIFEGUARD_TEST_REDIS_URL) and RabbitMQ on 127.0.0.1:5672 with its
//   management API on :15672 (per-test vhosts) — the management plugin is enabled when running as
//   root; a broker that is not running is reported with the command that starts it.
// The real-Nova harness's own packages (and its Keystone's) are checked by scripts/real-nova-harness.mjs
// when a selected file needs the harness, whether it starts one or reuses a running one.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

// The start hints every worker and the launcher give (packages/runtime/src/broker-start-hints.ts).
const hints = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'packages', 'runtime', 'broker-start-hints.json'), 'utf8'),
);
const startCommand = (broker) => {
  const hint = hints[broker];
  return (
    `sudo systemctl start ${hint.systemdService} (without systemd, ${hint.withoutSystemd}), ` +
    `or docker compose up -d ${hint.composeService}`
  );
};

const DEBIAN_PACKAGES = [
  'python3-oslo.messaging',
  'python3-pika',
  'fence-agents',
  'openipmi',
  'ipmitool',
  'prometheus',
  'chromium',
  'libvirt-clients',
  'libvirt-daemon',
  'python3-masakari',
  'python3-masakariclient',
  'python3-openstackclient',
  'masakari-process-monitor',
  'masakari-instance-monitor',
  'python3-libvirt',
];
const log = (message) => process.stdout.write(`[prerequisites] ${message}\n`);
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** The packages dpkg does not list as installed, or `null` when dpkg-query cannot run (no Debian tools). */
function missingPackages() {
  const missing = [];
  for (const name of DEBIAN_PACKAGES) {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax
    const result = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
    if (result.error) return null;
    if (result.status !== 0 || !result.stdout.includes('install ok installed')) missing.push(name);
  }
  return missing;
}

/** Why a command could not run at all: `apt-get is not on PATH`, or its own error; null when it ran. */
const couldNotRun = (command, result) =>
  result.error
    ? result.error.code === 'ENOENT'
      ? `${command} is not on PATH`
      : `${command} failed to start: ${result.error.message}`
    : null;

function portOpen(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (open) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function managementAnswers() {
  const url = process.env.LIFEGUARD_TEST_RABBITMQ_MANAGEMENT_URL ?? 'http://127.0.0.1:15672';
  try {
    const response = await fetch(`${url}/api/overview`, {
      headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
      signal: AbortSignal.timeout(3000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Checks every prerequisite and provides what it can.
 * @param options.sharedBrokers false for the fault suite, which starts brokers of its own: the shared
 *   Redis and RabbitMQ are then not checked (default true)
 * @returns a list of problems, each with what to do (empty when the machine is ready)
 */
export async function ensureTestPrerequisites({ sharedBrokers = true } = {}) {
  const problems = [];
  const missing = missingPackages();
  const installCommand = (names) => `apt-get install ${names.join(' ')}`;
  if (missing === null) {
    problems.push(
      `cannot tell which Debian packages are installed (dpkg-query is not on PATH); the tests need a Debian or Ubuntu machine with: ${installCommand(DEBIAN_PACKAGES)}`,
    );
  } else if (missing.length > 0) {
    if (isRoot()) {
      log(`installing ${missing.join(', ')} (apt-get)`);
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      const install = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
        stdio: 'inherit',
        env,
      });
      if (install.status !== 0) {
        const why = couldNotRun('apt-get', install) ?? `apt-get exited with status ${install.status}`;
        problems.push(
          `could not install the missing Debian packages (${why}); install them by hand: ${installCommand(missing)}`,
        );
      }
    } else {
      problems.push(`missing Debian packages; install them: sudo apt-get install ${missing.join(' ')}`);
    }
  }

  if (!sharedBrokers) return problems;
  const redis = new URL(process.env.LIFEGUARD_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  if (!(await portOpen(redis.hostname, Number(redis.port || 6379)))) {
    problems.push(
      `Redis does not answer at ${redis.hostname}:${redis.port || 6379}; start it: ${startCommand('Redis')}`,
    );
  }
  const amqpHost = process.env.LIFEGUARD_TEST_AMQP_HOST ?? '127.0.0.1';
  const amqpPort = Number(process.env.LIFEGUARD_TEST_AMQP_PORT ?? 5672);
  if (!(await portOpen(amqpHost, amqpPort))) {
    problems.push(
      `RabbitMQ does not answer at ${amqpHost}:${amqpPort}; start it: ${startCommand('RabbitMQ')}`,
    );
  } else if (!(await managementAnswers())) {
    if (isRoot()) {
      log('enabling the RabbitMQ management plugin (tests create a vhost each through its API)');
      spawnSync('rabbitmq-plugins', ['enable', '--quiet', 'rabbitmq_management'], { stdio: 'inherit' });
      for (let attempt = 0; attempt < 60 && !(await managementAnswers()); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    if (!(await managementAnswers())) {
      problems.push(
        'the RabbitMQ management API does not answer on :15672; run: rabbitmq-plugins enable rabbitmq_management',
      );
    }
  }
  return problems;
}
