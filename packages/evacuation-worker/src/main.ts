#!/usr/bin/env node
import { loadInstanceHaConfig, logConfigWarnings } from '@lifeguard/instance-ha';
import { createOpenStackClients, loadCloudConfig } from '@lifeguard/openstack';
import { ownVariablesOf, runMain, startService } from '@lifeguard/runtime';
import { EvacuationWorker } from './evacuation-worker.ts';
import {
  evacuationWorkerSettingsSchema,
  loadEvacuationWorkerEnvironment,
  loadEvacuationWorkerSettings,
} from './settings.ts';

/** The evacuation worker's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const EVACUATION_WORKER_HTTP_PORT = 9404;

runMain(async () => {
  // Every configuration first: an invalid key stops start-up (exit 78) before any broker is contacted.
  const environment = loadEvacuationWorkerEnvironment();
  const loaded = loadInstanceHaConfig();
  const settings = loadEvacuationWorkerSettings(loaded.config, environment);
  const cloud = loadCloudConfig();
  // InstanceHA's LOGLEVEL applies unless LIFEGUARD_LOG_LEVEL is set.
  const env = {
    ...process.env,
    LIFEGUARD_LOG_LEVEL: process.env.LIFEGUARD_LOG_LEVEL || loaded.config.pinoLogLevel,
  };
  const context = await startService({
    service: 'evacuation-worker',
    defaultHttpPort: EVACUATION_WORKER_HTTP_PORT,
    env,
    // A misspelt LIFEGUARD_EVACUATION_* variable is named with the one meant.
    ownVariables: ownVariablesOf(
      ['LIFEGUARD_EVACUATION_', 'LIFEGUARD_EVACUATE_', 'LIFEGUARD_REENABLE_'],
      evacuationWorkerSettingsSchema,
    ),
  });
  const { logger } = context;
  logConfigWarnings(logger, loaded.warnings);
  if (loaded.unknownKeys.length > 0)
    logger.info({ keys: loaded.unknownKeys }, 'config.yaml: keys neither InstanceHA nor lifeguard knows');
  const clients = createOpenStackClients({ config: cloud, logger });
  const worker = await EvacuationWorker.start({
    compute: clients.compute,
    image: clients.image,
    identity: clients.identity,
    config: loaded.config,
    settings,
    keyPrefix: context.redisSettings.keyPrefix,
    redis: context.redis,
    connectRedis: (role, name) => context.connectRedis(role, name),
    events: context.events,
    logger,
    registry: context.registry,
    amqp: context.amqp,
    instanceName: context.config.LIFEGUARD_INSTANCE_NAME,
  });
  context.admin.addReadiness({ name: 'bullmq-workers', check: () => worker.isRunning() });
  // Leave a few seconds of the shutdown budget for the brokers and the health server.
  const budget = Math.max(1000, context.config.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS * 1000 - 3000);
  context.shutdown.add('close BullMQ workers and queues', () => worker.close(budget));
  context.finishStartup();
});
