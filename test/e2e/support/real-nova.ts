import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { REAL_NOVA_API_VARIABLES, requireRealNovaVariables, waitFor } from '@lifeguard/testing';

const run = promisify(execFile);

/** The harness's fault-injection script (`kill HOST [SIGNAL]`, `start HOST`, `pid HOST`, `list`). */
export const COMPUTE_SCRIPT = resolve(import.meta.dirname, '../../harness/real-nova/compute.sh');

/** A compute service as Nova 2.53+ lists it. */
export interface NovaService {
  id: string;
  host: string;
  state: string;
  status: string;
  forced_down: boolean;
  disabled_reason: string | null;
  /** Nova's last heartbeat of the service (ISO 8601 without a zone, UTC, whole seconds). */
  updated_at: string | null;
}

/** A server as Nova lists it (the fields the tests read). */
export interface NovaServer {
  id: string;
  name: string;
  status: string;
  'OS-EXT-SRV-ATTR:host': string | null;
  'OS-EXT-STS:task_state': string | null;
  /** Why the server is in ERROR, as Nova records it. */
  fault?: { message?: string };
}

/**
 * The project's real-Nova harness (test/harness/real-nova) as `npm test` exports it (env.sh):
 * Nova's API with noauth2, the compute hosts and their nova-compute processes.
 * @throws Error when the harness's variables are missing (the file was not run through `npm test`)
 */
export function realNova() {
  requireRealNovaVariables([...REAL_NOVA_API_VARIABLES, 'RN_STATE']);
  const novaUrl = process.env.NOVA_URL!;
  const token = process.env.RN_TOKEN!;
  const state = process.env.RN_STATE!;

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
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const services = async (): Promise<NovaService[]> =>
    (await nova('GET', '/os-services?binary=nova-compute', undefined, '2.53')).body.services as NovaService[];
  const service = async (host: string): Promise<NovaService> => {
    const found = (await services()).find((each) => each.host === host);
    if (!found) throw new Error(`no nova-compute service on ${host}`);
    return found;
  };
  const compute = async (...args: string[]) =>
    (await run(COMPUTE_SCRIPT, args, { timeout: 60_000, env: { ...process.env, RN_STATE: state } })).stdout;

  const harness = {
    novaUrl,
    glanceUrl: process.env.GLANCE_URL!,
    token,
    state,
    hosts: process.env.RN_COMPUTE_HOSTS!.split(/\s+/).filter(Boolean),
    nova,
    services,
    service,

    /** A clouds.yaml entry for lifeguard (Nova's noauth2 through a fixed admin token). */
    cloudEntry: () => ({
      auth_type: 'admin_token',
      auth: { token, endpoint: novaUrl },
      image_endpoint_override: process.env.GLANCE_URL!,
    }),

    /**
     * Boots a server pinned to `host` (2.74) and waits until it is ACTIVE; returns its id. A host the
     * scheduler does not take yet (NoValidHost: just re-enabled, its placement trait
     * COMPUTE_STATUS_DISABLED is cleared by its nova-compute later) is asked again, the failed server
     * deleted, until it takes the server or 120 s pass; any other ERROR fails at once.
     */
    async boot(name: string, host: string): Promise<string> {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const id = await harness.bootOnce(name, host);
        const outcome = await waitFor(
          `server ${name} ACTIVE or ERROR`,
          async () => {
            const server = await harness.server(id);
            if (server.status === 'ERROR') return { fault: server.fault?.message ?? 'no fault given' };
            return server.status === 'ACTIVE' ? { fault: null } : undefined;
          },
          Math.max(1000, deadline - Date.now()),
          250,
        ).catch(async (error: unknown) => {
          await harness.deleteServers([id]).catch(() => undefined);
          throw error;
        });
        if (outcome.fault === null) return id;
        await harness.deleteServers([id]).catch(() => undefined);
        if (!/no valid host was found/i.test(outcome.fault) || Date.now() > deadline)
          throw new Error(`server ${name} went to ERROR on ${host}: ${outcome.fault}`);
        // Asked again at once: the deletion above waited for the failed server to be gone.
      }
    },

    /** `POST /servers` of one server pinned to `host`; returns its id. */
    async bootOnce(name: string, host: string): Promise<string> {
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
      return (answer.body.server as { id: string }).id;
    },

    /**
     * Boots several servers at once (name → host) and waits until each is ACTIVE; returns their ids
     * in the order given. When one fails, the ones that booted are deleted and the first error thrown.
     */
    async bootEach(servers: ReadonlyArray<readonly [name: string, host: string]>): Promise<string[]> {
      const booted = await Promise.allSettled(servers.map(([name, host]) => harness.boot(name, host)));
      const failure = booted.find((each) => each.status === 'rejected');
      if (failure) {
        const ids = booted.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
        await harness.deleteServers(ids).catch(() => undefined);
        throw failure.reason;
      }
      return booted.map((each) => (each as PromiseFulfilledResult<string>).value);
    },

    async server(id: string): Promise<NovaServer> {
      return (await nova('GET', `/servers/${id}`)).body.server as NovaServer;
    },

    /** Deletes servers and waits until Nova no longer knows them. */
    async deleteServers(ids: ReadonlyArray<string>): Promise<void> {
      for (const id of ids) await nova('DELETE', `/servers/${id}`);
      await waitFor(
        'the servers deleted',
        async () => {
          for (const id of ids) if ((await nova('GET', `/servers/${id}`)).status !== 404) return false;
          return true;
        },
        120_000,
        500,
      );
    },

    /** The pid of the host's nova-compute, or null when it is not running. */
    async computePid(host: string): Promise<number | null> {
      const line = (await compute('list')).split('\n').find((each) => each.startsWith(`${host}\t`));
      const pid = line?.split('\t')[1];
      return pid && pid !== '-' ? Number(pid) : null;
    },

    /**
     * Starts the host's nova-compute when it is not running, and continues it when it is stopped (a
     * hung host a test, or a test run that was interrupted, left behind). Does not wait for it to
     * report.
     */
    async startCompute(host: string): Promise<void> {
      const pid = await harness.computePid(host);
      if (pid === null) await compute('start', host);
      else if (processState(pid) === 'T') await compute('kill', host, 'CONT');
    },

    /**
     * Sends a signal to the host's nova-compute (KILL: a crash; STOP: a hung host) and returns once
     * the process shows it: a signal is delivered when the process is next scheduled, so right after
     * `kill` a busy process may still read as running.
     */
    async signalCompute(host: string, signal: 'KILL' | 'STOP' | 'CONT'): Promise<void> {
      const pid = await harness.computePid(host);
      await compute('kill', host, signal);
      if (pid === null) return;
      const shown: Record<typeof signal, (state: string | null) => boolean> = {
        KILL: (state) => state === null || state === 'Z',
        STOP: (state) => state === 'T',
        CONT: (state) => state !== 'T',
      };
      await waitFor(`${host}'s nova-compute (pid ${pid}) to show SIG${signal}`, () =>
        shown[signal](processState(pid)),
      );
    },

    /**
     * The shell command that stops (`off`: SIGKILL) or starts (`on`) the host's nova-compute through
     * the harness's compute.sh — what a BMC's chassis power does to the host it stands for.
     */
    chassisCommand(action: 'off' | 'on', host: string): string {
      const quoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
      const script = `RN_STATE=${quoted(state)} ${quoted(COMPUTE_SCRIPT)}`;
      return action === 'off'
        ? `${script} kill ${quoted(host)} KILL || true`
        : `${script} pid ${quoted(host)} || ${script} start ${quoted(host)}`;
    },

    /**
     * Leaves the harness as the other tests expect it: every nova-compute running (a stopped one is
     * continued, a dead one started), every compute service enabled, not forced down, and up.
     */
    async restore(): Promise<void> {
      for (const host of harness.hosts) await harness.startCompute(host);
      for (const host of harness.hosts) {
        const current = await service(host);
        if (current.forced_down || current.status !== 'enabled') {
          await waitFor(
            `${host} enabled again`,
            async () => {
              const answer = await nova(
                'PUT',
                `/os-services/${current.id}`,
                { forced_down: false, status: 'enabled' },
                '2.53',
              );
              return answer.status === 200;
            },
            120_000,
            1000,
          );
        }
      }
      await waitFor(
        'every compute service up',
        async () => (await services()).every((each) => each.state === 'up'),
        120_000,
        500,
      );
    },
  };
  return harness;
}

/** The state letter of a process (`R`, `S`, `T` stopped, `Z`, ...), or null when it does not exist. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}
