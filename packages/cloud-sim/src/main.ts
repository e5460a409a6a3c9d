#!/usr/bin/env node
import { booleanSetting, createLogger, environmentSource, parseConfig, runMain } from '@lifeguard/runtime';
import { z } from 'zod';
import { startCloudSim } from './cloud-sim.ts';
import { cloudSimConfigKeys, listenPort } from './config/cloud-sim-config.ts';

/** Environment variables of the standalone cloud-sim (every one optional). */
export const cloudSimConfigSchema = z.object({
  ...cloudSimConfigKeys({
    host: '127.0.0.1',
    port: 8780,
    redfishPort: 8443,
    hosts: 3,
    maximumHosts: 10_000,
    reportIntervalSeconds: 10,
    serviceDownTimeSeconds: 60,
    bootMilliseconds: 0,
    evacuationAcceptMilliseconds: 0,
    evacuationRebuildMilliseconds: 2000,
  }),
  /** Port of the HTTPS Redfish listener (one BMC per host); `off` disables it. */
  CLOUD_SIM_REDFISH_PORT: z.union([z.literal('off'), listenPort()]).default(8443),
  /** Servers spread over the hosts at start. */
  CLOUD_SIM_SERVERS: z.coerce.number().int().min(0).max(200_000).default(6),
  /** Scale mode: 1,000 hosts and 20,000 servers (overrides CLOUD_SIM_HOSTS and CLOUD_SIM_SERVERS). */
  CLOUD_SIM_SCALE: booleanSetting.default(false),
  /** `noauth2` (X-Auth-Token admin:admin) or `keystone` (tokens from /identity/v3). */
  CLOUD_SIM_AUTH: z.enum(['noauth2', 'keystone']).default('noauth2'),
  /** Keystone user admin's password. */
  CLOUD_SIM_ADMIN_PASSWORD: z.string().min(1).default('admin'),
  CLOUD_SIM_TOKEN_LIFETIME_SECONDS: z.coerce.number().int().min(1).default(3600),
});

runMain(async () => {
  const config = parseConfig(cloudSimConfigSchema, [environmentSource()]);
  const logger = createLogger({ service: 'cloud-sim' });
  const sim = await startCloudSim({
    listenHost: config.CLOUD_SIM_HOST,
    port: config.CLOUD_SIM_PORT,
    redfishPort: config.CLOUD_SIM_REDFISH_PORT === 'off' ? false : config.CLOUD_SIM_REDFISH_PORT,
    hosts: config.CLOUD_SIM_SCALE ? 1000 : config.CLOUD_SIM_HOSTS,
    servers: config.CLOUD_SIM_SCALE ? 20_000 : config.CLOUD_SIM_SERVERS,
    auth: config.CLOUD_SIM_AUTH,
    adminPassword: config.CLOUD_SIM_ADMIN_PASSWORD,
    tokenLifetimeSeconds: config.CLOUD_SIM_TOKEN_LIFETIME_SECONDS,
    model: {
      reportIntervalSeconds: config.CLOUD_SIM_REPORT_INTERVAL_SECONDS,
      serviceDownTimeSeconds: config.CLOUD_SIM_SERVICE_DOWN_TIME_SECONDS,
      bootMilliseconds: config.CLOUD_SIM_BOOT_MILLISECONDS,
      evacuation: {
        acceptMilliseconds: config.CLOUD_SIM_EVACUATION_ACCEPT_MILLISECONDS,
        rebuildMilliseconds: config.CLOUD_SIM_EVACUATION_REBUILD_MILLISECONDS,
      },
    },
  });
  logger.info(
    {
      urls: sim.urls,
      hosts: sim.model.hosts.size,
      servers: sim.model.servers.size,
      auth: config.CLOUD_SIM_AUTH,
    },
    'cloud-sim listening',
  );
  sim.closeOnSignals(logger);
});
