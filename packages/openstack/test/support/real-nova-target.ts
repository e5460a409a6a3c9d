import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { REAL_NOVA_API_VARIABLES, requireRealNovaVariables } from '@lifeguard/testing';
import { createOpenStackClients } from '../../src/index.ts';
import { type ContractTarget, rawCall } from './contract-target.ts';

const run = promisify(execFile);
const harnessDirectory = resolve(import.meta.dirname, '../../../../test/harness/real-nova');

/** The real-Nova harness's settings, exported by the test runner (scripts/run-tests.mjs) from its env.sh. */
export function realNovaEnvironment() {
  requireRealNovaVariables(REAL_NOVA_API_VARIABLES);
  return {
    novaUrl: process.env.NOVA_URL!,
    glanceUrl: process.env.GLANCE_URL!,
    token: process.env.RN_TOKEN!,
    imageId: process.env.RN_IMAGE_ID!,
    flavorId: process.env.RN_FLAVOR_ID!,
    hosts: process.env.RN_COMPUTE_HOSTS!.split(/\s+/).filter(Boolean),
  };
}

/** Runs test/harness/real-nova/compute.sh with the harness's settings from the environment. */
export async function harnessCompute(...args: string[]): Promise<string> {
  const { stdout } = await run(resolve(harnessDirectory, 'compute.sh'), args, { timeout: 60_000 });
  return stdout;
}

/**
 * The real-Nova harness as a contract target; the client is configured the way an operator would
 * with Nova's noauth2: OS_AUTH_TYPE=admin_token, OS_TOKEN, OS_ENDPOINT, OS_IMAGE_ENDPOINT_OVERRIDE.
 */
export function realNovaTarget(options: { pageSize?: number } = {}): ContractTarget {
  const settings = realNovaEnvironment();
  const clients = createOpenStackClients({
    env: {
      OS_AUTH_TYPE: 'admin_token',
      OS_TOKEN: settings.token,
      OS_ENDPOINT: settings.novaUrl,
      OS_IMAGE_ENDPOINT_OVERRIDE: settings.glanceUrl,
    },
    searchDirectories: [],
    retry: { attempts: 3, baseDelayMilliseconds: 100 },
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
  });
  return {
    label: 'real Nova',
    clients,
    hosts: settings.hosts,
    imageId: settings.imageId,
    flavorId: settings.flavorId,
    nova: (method, path, body, microversion = '2.74') =>
      rawCall(
        `${settings.novaUrl}${path}`,
        method,
        { 'x-auth-token': settings.token, 'x-openstack-nova-api-version': microversion },
        body,
      ),
    glance: (method, path, body, contentType) =>
      rawCall(`${settings.glanceUrl}${path}`, method, { 'x-auth-token': settings.token }, body, contentType),
    killCompute: async (host) => {
      await harnessCompute('kill', host);
    },
    startCompute: async (host) => {
      const listing = await harnessCompute('list');
      const running = listing
        .split('\n')
        .some((line) => line.startsWith(`${host}\t`) && !line.endsWith('\t-'));
      if (!running) await harnessCompute('start', host);
    },
    close: async () => {},
  };
}
