// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are Compose interpolations, not templates
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { demoCloudLayout, PACKAGE_REPOSITORY_ROOT, WORKER_KINDS, workerDefinitions } from '../src/index.ts';
import {
  COMPOSE_PATH,
  composeFileSchema,
  durationSeconds,
  interpolate,
  mountedFiles,
  readComposeFile,
} from './support/compose.ts';

const root = PACKAGE_REPOSITORY_ROOT;
const compose = readComposeFile();
const services = compose.services;
const workerServices = WORKER_KINDS.map((kind) => [kind, services[kind]!] as const);

/** An IPv4 address as a number. */
function ipv4(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

describe('docker-compose.yml', () => {
  it('is the Compose subset we use (strict schema: a misspelt key fails), with every lifeguard worker as a service', () => {
    for (const kind of WORKER_KINDS) assert.ok(services[kind], `service ${kind}`);
    assert.ok(services.rabbitmq && services.redis && services['cloud-sim']);
    const misspelt = parse(readFileSync(COMPOSE_PATH, 'utf8'), { merge: true });
    misspelt.services.redis.healtcheck = misspelt.services.redis.healthcheck;
    assert.equal(composeFileSchema.safeParse(misspelt).success, false, 'an unknown service key is refused');
  });

  it('RabbitMQ: the management image, a healthcheck, a volume, AMQP and management on loopback', () => {
    const rabbitmq = services.rabbitmq!;
    assert.match(rabbitmq.image ?? '', /^rabbitmq:[\d.]+-management$/);
    assert.deepEqual(rabbitmq.healthcheck?.test.slice(0, 2), ['CMD', 'rabbitmq-diagnostics']);
    assert.ok(rabbitmq.volumes?.some((volume) => volume.endsWith(':/var/lib/rabbitmq')));
    assert.deepEqual(rabbitmq.ports, ['127.0.0.1:5672:5672', '127.0.0.1:15672:15672']);
  });

  it('Redis: append-only persistence, noeviction, a healthcheck and its data on a volume', () => {
    const redis = services.redis!;
    const command = redis.command ?? [];
    const option = (name: string) => command[command.indexOf(name) + 1];
    assert.equal(command[0], 'redis-server');
    assert.equal(option('--appendonly'), 'yes');
    assert.equal(option('--maxmemory-policy'), 'noeviction');
    assert.deepEqual(redis.healthcheck?.test, ['CMD', 'redis-cli', 'ping']);
    assert.ok(redis.volumes?.some((volume) => volume.endsWith(':/data')));
  });

  it('every worker: built from the one Dockerfile, init, depends on healthy RabbitMQ and Redis, healthcheck on /readyz, stop grace above the shutdown budget', () => {
    for (const [kind, service] of workerServices) {
      assert.deepEqual(service.build, { context: '.', dockerfile: 'Dockerfile' }, kind);
      assert.equal(service.image, 'lifeguard:${LIFEGUARD_IMAGE_TAG:-latest}', kind);
      assert.equal(service.init, true, `${kind} runs under an init`);
      assert.equal(service.depends_on?.rabbitmq?.condition, 'service_healthy', `${kind} waits for RabbitMQ`);
      assert.equal(service.depends_on?.redis?.condition, 'service_healthy', `${kind} waits for Redis`);
      assert.notEqual(service.depends_on?.rabbitmq?.required, false);
      assert.deepEqual(
        service.healthcheck?.test,
        ['CMD', 'node', 'packages/stack/dist/readiness-probe.js'],
        kind,
      );
      const budget = Number(service.environment?.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS);
      assert.ok(budget > 0, `${kind} states its shutdown budget`);
      assert.ok(
        durationSeconds(service.stop_grace_period ?? '10s') > budget,
        `${kind}: stop_grace_period > ${budget} s`,
      );
      assert.equal(
        service.environment?.LIFEGUARD_HTTP_HOST,
        '0.0.0.0',
        `${kind} answers its healthcheck and scrapes`,
      );
    }
  });

  it('the workers run the same command lines, roles and health ports as npm start', () => {
    for (const definition of workerDefinitions(1)) {
      const service = services[definition.kind]!;
      assert.deepEqual(service.command, [definition.script], definition.kind);
      assert.equal(
        service.environment?.LIFEGUARD_HTTP_PORT,
        String(definition.defaultHttpPort),
        definition.kind,
      );
      for (const [name, value] of Object.entries(definition.roleEnvironment)) {
        assert.equal(service.environment?.[name], value, `${definition.kind}: ${name}`);
      }
    }
  });

  it('evacuation-worker (and every worker) scales with --scale: no container name, no host port', () => {
    for (const [kind, service] of workerServices) {
      assert.equal(service.container_name, undefined, kind);
      assert.equal(service.ports, undefined, kind);
    }
  });

  it('each worker gets exactly the files it reads: fencing.yaml only the fencing worker, clouds.yaml those that call Nova', () => {
    for (const [kind, service] of workerServices) {
      const env = service.environment ?? {};
      const mounts = mountedFiles(compose, service);
      const targets = mounts.map((mount) => mount.target);
      for (const variable of ['OS_CLIENT_CONFIG_FILE', 'INSTANCEHA_CONFIG_PATH', 'FENCING_CONFIG_PATH']) {
        if (env[variable])
          assert.ok(targets.includes(env[variable]), `${kind}: ${variable} ${env[variable]} is mounted`);
      }
      assert.equal(
        targets.includes('/run/secrets/fencing.yaml'),
        kind === 'fencing-worker',
        `${kind} and fencing.yaml`,
      );
      assert.equal(
        Boolean(env.OS_CLIENT_CONFIG_FILE),
        kind !== 'provisioning-blocks',
        `${kind} and clouds.yaml`,
      );
      for (const mount of mounts) assert.ok(existsSync(join(root, mount.file)), `${mount.file} exists`);
    }
  });

  it('cloud-sim: under the profile sim, at the fixed address fencing.yaml names, with the demo layout', () => {
    const cloudSim = services['cloud-sim']!;
    assert.deepEqual(cloudSim.profiles, ['sim']);
    assert.deepEqual(cloudSim.command, ['packages/stack/dist/demo-cloud-main.js']);
    assert.ok(cloudSim.healthcheck, 'a healthcheck (the workers wait for it)');
    const address = (cloudSim.networks as Record<string, { ipv4_address: string }>).lifeguard!.ipv4_address;
    const [subnet, bits] = compose.networks!.lifeguard!.ipam.config[0]!.subnet.split('/');
    const mask = 2 ** 32 - 2 ** (32 - Number(bits));
    assert.equal(
      (ipv4(address) & mask) >>> 0,
      (ipv4(subnet!) & mask) >>> 0,
      `${address} is in ${subnet}/${bits}`,
    );
    for (const [kind, service] of workerServices) {
      assert.deepEqual(
        service.depends_on?.['cloud-sim'],
        { condition: 'service_healthy', required: false },
        kind,
      );
    }

    const environment = cloudSim.environment ?? {};
    const layout = demoCloudLayout({ hosts: Number(environment.CLOUD_SIM_HOSTS) });
    const directory = join(root, interpolate('${LIFEGUARD_CONFIGURATION:-./deploy/compose/simulated}'));
    const fencing = parse(readFileSync(join(directory, 'fencing.yaml'), 'utf8')).FencingConfig;
    assert.deepEqual(Object.keys(fencing), [...layout.hosts]);
    for (const host of layout.hosts) {
      assert.deepEqual(fencing[host], {
        agent: 'fence_redfish',
        ipaddr: address,
        ipport: Number(environment.CLOUD_SIM_REDFISH_PORT),
        login: 'admin',
        passwd: `bmc-${host}`,
        options: { ssl_insecure: 1 },
      });
    }
    const clouds = parse(readFileSync(join(directory, 'clouds.yaml'), 'utf8')).clouds;
    const cloud = clouds[interpolate(services['node-monitor']!.environment!.OS_CLOUD!)];
    assert.equal(cloud.auth.endpoint, `http://cloud-sim:${environment.CLOUD_SIM_PORT}/compute/v2.1`);
    const config = parse(readFileSync(join(directory, 'config.yaml'), 'utf8')).config;
    assert.ok(
      Number(config.POLL) >= 15,
      'POLL within InstanceHA range: no unsafe-interval switch in compose',
    );
  });

  it('interpolation uses only ${NAME:-default} and ${NAME}, and each default is usable as is', () => {
    const text = readFileSync(COMPOSE_PATH, 'utf8');
    const forms = text.match(/\$\{[^}]*\}/g) ?? [];
    assert.ok(forms.length > 0);
    for (const form of forms) assert.match(form, /^\$\{[A-Z_]+(:-[^}]*)?\}$/);
    assert.doesNotThrow(() => interpolate(text));
    assert.equal(interpolate('${OS_CLOUD:-lifeguard-sim}', { OS_CLOUD: 'production' }), 'production');
    assert.equal(interpolate('${OS_CLOUD:-lifeguard-sim}', { OS_CLOUD: '' }), 'lifeguard-sim');
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('is multi-stage on Debian: installs with npm ci, builds, prunes dev dependencies', () => {
    assert.ok(stages.length >= 2, 'a build stage and a runtime stage');
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:20[\d.]*-bookworm-slim$/m);
    const build = stages[0]!;
    assert.match(build, /npm ci /);
    assert.match(build, /turbo run build/);
    assert.match(build, /npm prune --omit=dev/);
  });

  it('runtime: the fence agents and ipmitool installed, not root, node as the entry point, compose commands present after a build', () => {
    const runtime = stages.at(-1)!;
    assert.match(runtime, /apt-get install[^\n]*\bfence-agents\b[^\n]*\bipmitool\b/);
    assert.match(runtime, /^USER node$/m);
    assert.match(runtime, /^ENTRYPOINT \["node"\]$/m);
    assert.match(runtime, /^COPY --from=build \/app\/packages \.\/packages$/m);
    assert.ok(existsSync(join(root, '.dockerignore')));
    for (const service of Object.values(services)) {
      const script = (
        service.entrypoint?.[0] === 'node' ? service.entrypoint.slice(1) : (service.command ?? [])
      )[0];
      if (script?.startsWith('packages/')) assert.match(script, /^packages\/[a-z-]+\/dist\/[a-z-]+\.js$/);
    }
  });
});
