#!/usr/bin/env node
import { JOB_QUEUES } from '@lifeguard/contracts';
import { bullmqPrefix, runMain, startService } from '@lifeguard/runtime';
import { Queue } from 'bullmq';
import { INSTANCE_RESTART_VARIABLES } from '../own-variables.ts';
import { InstanceMonitor } from './instance-monitor.ts';
import { loadInstanceMonitorSettings } from './monitor-settings.ts';
import { checkVirsh } from './virsh-check.ts';

/** The instance monitor's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const INSTANCE_MONITOR_HTTP_PORT = 9409;

runMain(async () => {
  // Every configuration first, virsh included: exit 78 before any broker is contacted.
  const settings = loadInstanceMonitorSettings();
  const virshVersion = await checkVirsh(settings.virsh);
  const context = await startService({
    service: 'instance-monitor',
    defaultHttpPort: INSTANCE_MONITOR_HTTP_PORT,
    ownVariables: INSTANCE_RESTART_VARIABLES,
  });
  const { logger } = context;
  const producer = await context.connectRedis('producer', 'bullmq-producer');
  const queue = new Queue(JOB_QUEUES.instanceRestart, {
    connection: producer,
    prefix: bullmqPrefix(context.redisSettings.keyPrefix),
  });
  queue.on('error', (error) => logger.warn({ err: error }, 'BullMQ queue error'));
  const monitor = new InstanceMonitor({
    ...settings,
    queue,
    logger: logger.child({ component: 'instance-monitor' }),
  });
  await monitor.start();
  logger.info(
    { uri: settings.uri, host: settings.host, virsh: settings.virsh, virshVersion },
    'instance monitor watching libvirt domain events',
  );
  context.shutdown.add('stop virsh and close the queue', async () => {
    await monitor.stop();
    await queue.close();
    producer.disconnect();
  });
  context.finishStartup();
});
