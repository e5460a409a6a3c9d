import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@lifeguard/testing';

const run = promisify(execFile);
const harness = resolve(import.meta.dirname, '../../../../test/harness/real-nova');

/** The real-Nova harness's settings, exported to the tests by `npm test` from its env.sh. */
export function realNova() {
  const required = ['NOVA_URL', 'GLANCE_URL', 'RN_TOKEN', 'RN_IMAGE_ID', 'RN_FLAVOR_ID', 'RN_COMPUTE_HOSTS'];
  const missing = required.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(
      `the real-Nova harness is not running (missing ${missing.join(', ')}): run the test through \`npm test\`, which starts test/harness/real-nova`,
    );
  }
  const novaUrl = process.env.NOVA_URL!;
  const token = process.env.RN_TOKEN!;
  const nova = async (method: string, path: string, body?: unknown, microversion = '2.74') => {
    const response = await fetch(`${novaUrl}${path}`, {
      method,
      headers: {
        'x-auth-token': token,
        'x-openstack-nova-api-version': microversion,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const services = async () =>
    (await nova('GET', '/os-services?binary=nova-compute')).body.services as Array<{
      id: string;
      host: string;
      state: string;
      status: string;
      forced_down: boolean;
    }>;
  return {
    /** Environment for a node-monitor process (Nova's noauth2 through an admin token). */
    clientEnv: {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: token,
      OS_ENDPOINT: novaUrl,
      OS_IMAGE_ENDPOINT_OVERRIDE: process.env.GLANCE_URL!,
    },
    hosts: process.env.RN_COMPUTE_HOSTS!.split(/\s+/).filter(Boolean),
    nova,
    services,
    async boot(name: string, host: string): Promise<string> {
      const answer = await nova('POST', '/servers', {
        server: {
          name,
          imageRef: process.env.RN_IMAGE_ID,
          flavorRef: process.env.RN_FLAVOR_ID,
          networks: 'none',
          host,
        },
      });
      if (answer.status !== 202)
        throw new Error(`boot on ${host}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
      const id = (answer.body.server as { id: string }).id;
      await waitFor(
        `server ${name} ACTIVE`,
        async () => {
          const server = (await nova('GET', `/servers/${id}`)).body.server as { status: string };
          if (server.status === 'ERROR') throw new Error(`server ${name} went to ERROR`);
          return server.status === 'ACTIVE';
        },
        120_000,
        500,
      );
      return id;
    },
    async updateService(host: string, body: Record<string, unknown>): Promise<void> {
      const service = (await services()).find((each) => each.host === host)!;
      const answer = await nova('PUT', `/os-services/${service.id}`, body, '2.53');
      if (answer.status !== 200)
        throw new Error(`PUT os-services ${host}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
    },
    async killCompute(host: string): Promise<void> {
      await run(resolve(harness, 'compute.sh'), ['kill', host], { timeout: 60_000 });
    },
    /** Starts the host's nova-compute when it is not running and waits until Nova reports it up. */
    async startCompute(host: string): Promise<void> {
      const { stdout } = await run(resolve(harness, 'compute.sh'), ['list'], { timeout: 60_000 });
      const running = stdout
        .split('\n')
        .some((line) => line.startsWith(`${host}\t`) && !line.endsWith('\t-'));
      if (!running) await run(resolve(harness, 'compute.sh'), ['start', host], { timeout: 120_000 });
      await waitFor(
        `${host} up`,
        async () => (await services()).find((each) => each.host === host)?.state === 'up',
        120_000,
        500,
      );
    },
  };
}
