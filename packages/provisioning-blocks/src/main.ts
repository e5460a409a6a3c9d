#!/usr/bin/env node
import { createOpenStackClients, loadCloudConfig } from '@lifeguard/openstack';
import { runMain, startService } from '@lifeguard/runtime';
import { loadProvisioningConfiguration, notifiesNova, provisioningServiceName } from './configuration.ts';
import { PROVISIONING_VARIABLES } from './own-variables.ts';
import { startProvisioning } from './service.ts';

/** The health/metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const PROVISIONING_HTTP_PORT = 9410;

/**
 * The provisioning-blocks process. LIFEGUARD_PROVISIONING_ROLE chooses what it runs: `all` (default),
 * `service` (oslo RPC server, native consumers, outbox relay) or `port-status` (port-status subscriber,
 * Nova notifier, outbox relay). Every configuration (and, when Nova is notified, the cloud: OS_CLOUD,
 * clouds.yaml or OS_*) is read first, so a bad key stops the process (exit 78) before any connection.
 */
runMain(async () => {
  const configuration = loadProvisioningConfiguration();
  const cloud = notifiesNova(configuration) ? loadCloudConfig() : null;
  const context = await startService({
    service: provisioningServiceName(configuration.LIFEGUARD_PROVISIONING_ROLE),
    defaultHttpPort: PROVISIONING_HTTP_PORT,
    ownVariables: PROVISIONING_VARIABLES,
  });
  const compute = cloud ? createOpenStackClients({ config: cloud, logger: context.logger }).compute : null;
  await startProvisioning(context, configuration, { compute });
  context.finishStartup();
});
