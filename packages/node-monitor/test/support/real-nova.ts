import { REDIS_URL, waitFor } from '@lifeguard/testing';
import { realNova as realNovaHarness } from '../../../../test/e2e/support/real-nova.ts';

/**
 * The real-Nova harness (test/e2e/support/real-nova.ts, as `npm test` exports it) with what the
 * node-monitor tests add: the environment of a node-monitor process, and compute hosts changed by name.
 * @throws Error when the harness's variables are missing (the file was not run through `npm test`)
 */
export function realNova() {
  const harness = realNovaHarness();
  /** Environment for a node-monitor process (Nova's noauth2 through an admin token). */
  const clientEnv = {
    OS_AUTH_TYPE: 'admin_token',
    OS_TOKEN: harness.token,
    OS_ENDPOINT: harness.novaUrl,
    OS_IMAGE_ENDPOINT_OVERRIDE: harness.glanceUrl,
  };
  /** Updates the host's nova-compute service (PUT /os-services/{id}, microversion 2.53). */
  const updateService = async (host: string, body: Record<string, unknown>): Promise<void> => {
    const service = await harness.service(host);
    const answer = await harness.nova('PUT', `/os-services/${service.id}`, body, '2.53');
    if (answer.status !== 200)
      throw new Error(`PUT os-services ${host}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  };
  /** Starts the host's nova-compute when it is not running and waits until Nova reports it up. */
  const startCompute = async (host: string): Promise<void> => {
    await harness.startCompute(host);
    await waitFor(`${host} up`, async () => (await harness.service(host)).state === 'up', 120_000, 500);
  };
  return {
    ...harness,
    clientEnv,
    updateService,
    startCompute,
    /** SIGKILLs the host's nova-compute (a crash). */
    async killCompute(host: string): Promise<void> {
      await harness.signalCompute(host, 'KILL');
    },
    /**
     * SIGSTOPs the host's nova-compute (a hung host): Nova sees what it sees of a crash, and
     * startCompute continues it (reporting again within report_interval) instead of starting a new one.
     */
    async hangCompute(host: string): Promise<void> {
      await harness.signalCompute(host, 'STOP');
    },
    /**
     * Environment for a node-monitor process on the harness: its cloud (clientEnv), the RabbitMQ vhost
     * `amqpUrl`, the test Redis under `keyPrefix`, short intervals allowed, a leader lease of
     * `leaseTtlSeconds` seconds.
     */
    monitorEnv(amqpUrl: string, keyPrefix: string, leaseTtlSeconds: number): Record<string, string> {
      return {
        ...clientEnv,
        LIFEGUARD_AMQP_URL: amqpUrl,
        LIFEGUARD_REDIS_URL: REDIS_URL,
        LIFEGUARD_REDIS_KEY_PREFIX: keyPrefix,
        LIFEGUARD_UNSAFE_SHORT_INTERVALS: 'true',
        LIFEGUARD_NODE_MONITOR_LEASE_TTL_SECONDS: String(leaseTtlSeconds),
      };
    },
    /**
     * Cleans up after a test: every nova-compute started and its service enabled, not forced down
     * (failures to do so are ignored), then `servers` deleted.
     */
    async restoreHostsAndDelete(servers: ReadonlyArray<string>): Promise<void> {
      // Started together: each nova-compute takes seconds of CPU to start.
      await Promise.all(harness.hosts.map((host) => startCompute(host).catch(() => undefined)));
      for (const host of harness.hosts) {
        await updateService(host, { status: 'enabled', forced_down: false }).catch(() => undefined);
      }
      for (const id of servers) await harness.nova('DELETE', `/servers/${id}`);
    },
  };
}
