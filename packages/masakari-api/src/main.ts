#!/usr/bin/env node
import { createOpenStackClients } from '@lifeguard/openstack';
import { ConfigError, runMain, startService } from '@lifeguard/runtime';
import { MasakariApi } from './masakari-api-service.ts';
import { MASAKARI_VARIABLES } from './masakari-variables.ts';
import { chooseAuthStrategy, loadMasakariApiSettings } from './settings.ts';

/** The Masakari API worker's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const MASAKARI_API_HTTP_PORT = 9406;

runMain(async () => {
  // Invalid configuration stops start-up before any broker is touched (exit status 78).
  const settings = loadMasakariApiSettings();
  const clients = createOpenStackClients();
  const authUrl = settings.LIFEGUARD_MASAKARI_KEYSTONE_URL ?? clients.config.auth.auth_url ?? null;
  const chosen = chooseAuthStrategy(settings.LIFEGUARD_MASAKARI_AUTH_STRATEGY, clients.auth.authType);
  if ('problem' in chosen) {
    throw new ConfigError([
      {
        key: 'LIFEGUARD_MASAKARI_AUTH_STRATEGY',
        source: 'environment',
        problem: chosen.problem,
        value: JSON.stringify(settings.LIFEGUARD_MASAKARI_AUTH_STRATEGY),
      },
    ]);
  }
  const keystone = chosen.strategy === 'keystone';
  const context = await startService({
    service: 'masakari-api',
    defaultHttpPort: MASAKARI_API_HTTP_PORT,
    ownVariables: MASAKARI_VARIABLES,
  });
  const { logger } = context;
  if (!keystone)
    logger.warn('Masakari API with noauth2 (the cloud has no Keystone): every call is taken as an admin’s');
  const api = await MasakariApi.start({
    settings,
    strategy: chosen.strategy,
    redis: context.redis,
    keyPrefix: context.redisSettings.keyPrefix,
    compute: clients.compute,
    auth: keystone ? clients.auth : null,
    authUrl,
    logger,
    registry: context.registry,
  });
  context.shutdown.add('stop the Masakari API', () => api.close());
  context.admin.addReadiness({ name: 'masakari-api', check: () => api.server.listening });
  logger.info(
    {
      port: api.port,
      bind: settings.LIFEGUARD_MASAKARI_API_BIND,
      auth: chosen.strategy,
    },
    'Masakari v1 API listening',
  );
  context.finishStartup();
});
