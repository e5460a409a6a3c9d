#!/usr/bin/env node
import { createLogger, environmentSource, parseConfig, runMain } from '@lifeguard/runtime';
import { z } from 'zod';
import { startDemoCloud } from './demo-cloud.ts';

const whole = (minimum: number) => z.coerce.number().int().min(minimum);

/**
 * Environment of the demo cloud (cloud-sim seeded as `npm start` seeds it: aggregates, tagged flavors
 * and images, servers, reserved hosts, a Redfish BMC per host). The names are cloud-sim's own.
 */
export const demoCloudConfigSchema = z.object({
  CLOUD_SIM_HOST: z.string().min(1).default('127.0.0.1'),
  CLOUD_SIM_PORT: whole(0).max(65535).default(8780),
  CLOUD_SIM_REDFISH_PORT: whole(0).max(65535).default(8443),
  /** Compute hosts compute-01..NN. */
  CLOUD_SIM_HOSTS: whole(1).max(1000).default(12),
  /** Nova's report_interval and service_down_time, in seconds. */
  CLOUD_SIM_REPORT_INTERVAL_SECONDS: z.coerce.number().positive().default(2),
  CLOUD_SIM_SERVICE_DOWN_TIME_SECONDS: z.coerce.number().positive().default(10),
  CLOUD_SIM_BOOT_MILLISECONDS: whole(0).default(3000),
  CLOUD_SIM_EVACUATION_ACCEPT_MILLISECONDS: whole(0).default(200),
  CLOUD_SIM_EVACUATION_REBUILD_MILLISECONDS: whole(0).default(2000),
});

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
  const stop = async (signal: string) => {
    logger.info({ signal }, 'cloud-sim stopping');
    await sim.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
});
