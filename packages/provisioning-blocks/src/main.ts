import { runMain, startService } from '@lifeguard/runtime';
import { loadProvisioningConfiguration } from './configuration.ts';
import { startProvisioning } from './service.ts';

/**
 * The provisioning-blocks process. LIFEGUARD_PROVISIONING_ROLE chooses what it runs: `all` (default),
 * `service` (oslo RPC server, native consumers, outbox relay) or `port-status` (port-status subscriber,
 * Nova notifier, outbox relay). Configuration errors stop it before any connection is made.
 */
runMain(async () => {
  const configuration = loadProvisioningConfiguration();
  const context = await startService({ service: 'provisioning-blocks', defaultHttpPort: 9410 });
  await startProvisioning(context, configuration);
  context.finishStartup();
});
