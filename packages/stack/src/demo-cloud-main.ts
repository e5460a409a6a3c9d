#!/usr/bin/env node
import { cloudSimConfigKeys } from '@lifeguard/cloud-sim';
import { createLogger, environmentSource, parseConfig, runMain } from '@lifeguard/runtime';
import { z } from 'zod';
import { startDemoCloud } from './demo-cloud.ts';

/**
 * Environment of the demo cloud (cloud-sim seeded as `npm start` seeds it: aggregates, tagged flavors
 * and images, servers, reserved hosts, a Redfish BMC per host): cloud-sim's own keys, with the demo's
 * defaults. CLOUD_SIM_HOSTS counts compute hosts compute-01..NN.
 */
export const demoCloudConfigSchema = z.object(
  cloudSimConfigKeys({
    host: '127.0.0.1',
    port: 8780,
    redfishPort: 8443,
    hosts: 12,
    maximumHosts: 1000,
    reportIntervalSeconds: 2,
    serviceDownTimeSeconds: 10,
    bootMilliseconds: 3000,
    evacuationAcceptMilliseconds: 200,
    evacuationRebuildMilliseconds: 2000,
  }),
);

runMain(async () => {
  const config = parseConfig(demoCloudConfigSchema, [environmentSource()]);
  const logger = createLogger({ service: 'cloud-sim' });
  const { sim, layout } = await startDemoCloud({
    listenHost: config.CLOUD_SIM_HOST,
    port: config.CLOUD_SIM_PORT,
    redfishPort: config.CLOUD_SIM_REDFISH_PORT,
    hosts: config.CLOUD_SIM_HOSTS,
    reportIntervalSeconds: config.CLOUD_SIM_REPORT_INTERVAL_SECONDS,
    serviceDownTimeSeconds: config.CLOUD_SIM_SERVICE_DOWN_TIME_SECONDS,
    bootMilliseconds: config.CLOUD_SIM_BOOT_MILLISECONDS,
    evacuationAcceptMilliseconds: config.CLOUD_SIM_EVACUATION_ACCEPT_MILLISECONDS,
    evacuationRebuildMilliseconds: config.CLOUD_SIM_EVACUATION_REBUILD_MILLISECONDS,
  });
  logger.info(
    {
      urls: sim.urls,
      hosts: layout.hosts.length,
      servers: sim.model.servers.size,
      reserved: layout.reservedHosts,
    },
    'cloud-sim (demo layout) listening',
  );
  sim.closeOnSignals(logger);
});
