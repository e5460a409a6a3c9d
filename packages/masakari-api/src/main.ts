#!/usr/bin/env node
import { createOpenStackClients } from '@lifeguard/openstack';
import { ConfigError, runMain, startService } from '@lifeguard/runtime';
import { MasakariApi } from './masakari-api-service.ts';
import { loadMasakariApiSettings } from './settings.ts';

/** The Masakari API worker's health and metrics port when LIFEGUARD_HTTP_PORT is not set. */
export const MASAKARI_API_HTTP_PORT = 9406;

runMain(async () => {
  // Invalid configuration stops start-up before any broker is touched (exit status 78).
  const settings = loadMasakariApiSettings();
  const keystone = settings.LIFEGUARD_MASAKARI_AUTH_STRATEGY === 'keystone';
  const clients = createOpenStackClients();
  const authUrl = settings.LIFEGUARD_MASAKARI_KEYSTONE_URL ?? clients.config.auth.auth_url ?? null;
  if (
    keystone &&
    (authUrl === null || clients.auth.authType === 'none' || clients.auth.authType === 'admin_token')
  ) {
    throw new ConfigError([
      {
        key: 'LIFEGUARD_MASAKARI_AUTH_STRATEGY',
        source: 'environment or default',
        problem:
          'keystone needs the service user of a cloud with Keystone (clouds.yaml auth_type password or v3applicationcredential); use noauth2 only without Keystone',
        value: JSON.stringify(settings.LIFEGUARD_MASAKARI_AUTH_STRATEGY),
      },
    ]);
  }
  const context = await startService({ service: 'masakari-api', defaultHttpPort: MASAKARI_API_HTTP_PORT });
  const { logger } = context;
  if (!keystone)
    logger.warn('LIFEGUARD_MASAKARI_AUTH_STRATEGY=noauth2: every Masakari API call is taken as an admin’s');
  const api = await MasakariApi.start({
    settings,
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
      auth: settings.LIFEGUARD_MASAKARI_AUTH_STRATEGY,
    },
    'Masakari v1 API listening',
  );
  context.finishStartup();
});
