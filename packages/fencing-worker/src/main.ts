#!/usr/bin/env node
import { logConfigWarnings } from '@lifeguard/instance-ha';
import { createOpenStackClients } from '@lifeguard/openstack';
import { closeRedisClient, ownVariablesOf, runMain, startService } from '@lifeguard/runtime';
import { FencingWorker } from './worker/fencing-worker.ts';
import { fencingWorkerSchema, loadFencingWorkerConfig } from './worker/worker-config.ts';

/** The fencing worker's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const FENCING_WORKER_HTTP_PORT = 9403;

runMain(async () => {
  // Invalid configuration stops start-up before any broker is touched (exit status 78).
  const config = loadFencingWorkerConfig();
  const context = await startService({
    service: 'fencing-worker',
    defaultHttpPort: FENCING_WORKER_HTTP_PORT,
    // A misspelt LIFEGUARD_FENCING_* variable is named with the one meant.
    ownVariables: ownVariablesOf(
      ['LIFEGUARD_FENCING_', 'LIFEGUARD_FENCE_', 'LIFEGUARD_IPMITOOL_'],
      fencingWorkerSchema,
    ),
  });
  const { logger } = context;
  logConfigWarnings(logger, config.instanceHa.warnings);
  if (config.instanceHa.unknownKeys.length > 0) {
    logger.warn({ keys: config.instanceHa.unknownKeys }, 'config.yaml has keys lifeguard does not know');
  }
  for (const host of config.fencing.hosts) {
    for (const method of host.methods) {
      if (method.kind === 'redfish' && !method.useTls) {
        logger.warn(
          { host: host.key, method: method.name },
          'Redfish over plain http: the BMC password travels in clear (set tls: "true")',
        );
      }
    }
  }
  const clients = createOpenStackClients({ logger });
  const workerRedis = await context.connectRedis('worker', 'bullmq-worker');
  const worker = await FencingWorker.start({
    config,
    amqp: context.amqp,
    redis: context.redis,
    workerRedis,
    keyPrefix: context.redisSettings.keyPrefix,
    events: context.events,
    compute: clients.compute,
    identity: clients.identity,
    image: clients.image,
    logger,
    registry: context.registry,
    admin: context.admin,
    instanceName: context.config.LIFEGUARD_INSTANCE_NAME,
  });
  const budgetMilliseconds = Math.max(1000, (context.config.LIFEGUARD_SHUTDOWN_TIMEOUT_SECONDS - 3) * 1000);
  context.shutdown.add('stop the fencing worker', () => worker.close(budgetMilliseconds));
  context.shutdown.add('close the BullMQ worker connection', async () => {
    await closeRedisClient(workerRedis);
  });
  context.finishStartup();
});
