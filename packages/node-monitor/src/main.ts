#!/usr/bin/env node
import { loadInstanceHaConfig } from '@lifeguard/instance-ha';
import { createOpenStackClients, loadCloudConfig } from '@lifeguard/openstack';
import { environmentSource, ownVariablesOf, runMain, startService } from '@lifeguard/runtime';
import { startNodeMonitor } from './node-monitor.ts';
import { loadNodeMonitorSettings, nodeMonitorSettingsSchema } from './settings.ts';

/** The health/metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const NODE_MONITOR_HTTP_PORT = 9402;

runMain(async () => {
  // Every configuration first, so a bad key stops the process (exit 78) before any connection.
  const settings = loadNodeMonitorSettings([environmentSource()]);
  const instanceHa = loadInstanceHaConfig();
  const cloud = loadCloudConfig();
  // InstanceHA's LOGLEVEL applies unless LIFEGUARD_LOG_LEVEL is set.
  const env = {
    ...process.env,
    LIFEGUARD_LOG_LEVEL: process.env.LIFEGUARD_LOG_LEVEL || instanceHa.config.pinoLogLevel,
  };
  const service = await startService({
    service: 'node-monitor',
    defaultHttpPort: NODE_MONITOR_HTTP_PORT,
    env,
    // A misspelt LIFEGUARD_NODE_MONITOR_* variable is named with the one meant.
    ownVariables: ownVariablesOf(
      ['LIFEGUARD_NODE_MONITOR_', 'LIFEGUARD_KDUMP_', 'LIFEGUARD_HEARTBEAT_'],
      nodeMonitorSettingsSchema,
    ),
  });
  const clients = createOpenStackClients({ config: cloud, logger: service.logger });
  const monitor = await startNodeMonitor({
    context: service,
    instanceHa,
    settings,
    compute: clients.compute,
    image: clients.image,
  });
  service.shutdown.add('stop node monitor', () => monitor.stop());
  service.finishStartup();
});
