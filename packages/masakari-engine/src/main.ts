#!/usr/bin/env node
import { loadInstanceHaConfig, logConfigWarnings } from '@lifeguard/instance-ha';
import { MASAKARI_VARIABLES } from '@lifeguard/masakari-api';
import { createOpenStackClients, loadCloudConfig } from '@lifeguard/openstack';
import { runMain, startService } from '@lifeguard/runtime';
import { MasakariEngine } from './masakari-engine.ts';
import { loadMasakariEngineSettings } from './settings.ts';

/** The Masakari engine's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const MASAKARI_ENGINE_HTTP_PORT = 9407;

runMain(async () => {
  // Every configuration first: an invalid key stops start-up (exit 78) before any broker is contacted.
  const settings = loadMasakariEngineSettings();
  const loaded = loadInstanceHaConfig();
  const cloud = loadCloudConfig();
  const env = {
    ...process.env,
    LIFEGUARD_LOG_LEVEL: process.env.LIFEGUARD_LOG_LEVEL || loaded.config.pinoLogLevel,
  };
  const context = await startService({
    service: 'masakari-engine',
    defaultHttpPort: MASAKARI_ENGINE_HTTP_PORT,
    env,
    ownVariables: MASAKARI_VARIABLES,
  });
  const { logger } = context;
  logConfigWarnings(logger, loaded.warnings);
  const clients = createOpenStackClients({ config: cloud, logger });
  const engine = await MasakariEngine.start({
    settings,
    config: loaded.config,
    redis: context.redis,
    workerRedis: await context.connectRedis('worker', 'masakari-engine'),
    keyPrefix: context.redisSettings.keyPrefix,
    compute: clients.compute,
    logger,
    registry: context.registry,
  });
  context.admin.addReadiness({
    name: 'bullmq-worker',
    check: () => loaded.config.disabled || engine.isRunning(),
  });
  const budget = Math.max(1000, context.config.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS * 1000 - 3000);
  context.shutdown.add('close the BullMQ worker and queue', () => engine.close(budget));
  context.finishStartup();
});
