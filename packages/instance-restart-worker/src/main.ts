#!/usr/bin/env node
import { createOpenStackClients, loadCloudConfig } from '@lifeguard/openstack';
import { runMain, startService } from '@lifeguard/runtime';
import { InstanceRestartWorker } from './instance-restart-worker.ts';
import { INSTANCE_RESTART_VARIABLES } from './own-variables.ts';
import { loadInstanceRestartSettings } from './settings.ts';

/** The instance restart worker's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const INSTANCE_RESTART_WORKER_HTTP_PORT = 9408;

runMain(async () => {
  // Every configuration first: an invalid variable stops start-up (exit 78) before any broker is contacted.
  const settings = loadInstanceRestartSettings();
  const cloud = loadCloudConfig();
  const context = await startService({
    service: 'instance-restart-worker',
    defaultHttpPort: INSTANCE_RESTART_WORKER_HTTP_PORT,
    ownVariables: INSTANCE_RESTART_VARIABLES,
  });
  const { logger } = context;
  const clients = createOpenStackClients({ config: cloud, logger });
  const worker = await InstanceRestartWorker.start({
    compute: clients.compute,
    settings,
    keyPrefix: context.redisSettings.keyPrefix,
    redis: context.redis,
    connectRedis: (role, name) => context.connectRedis(role, name),
    events: context.events,
    logger,
    registry: context.registry,
    instanceName: context.config.LIFEGUARD_INSTANCE_NAME,
  });
  context.admin.addReadiness({ name: 'bullmq-workers', check: () => worker.isRunning() });
  const budget = Math.max(1000, context.config.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS * 1000 - 3000);
  context.shutdown.add('close the BullMQ worker and queue', () => worker.close(budget));
  context.finishStartup();
});
