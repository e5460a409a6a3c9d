import { NovaClient, StaticTokenAuth } from '@lifeguard/openstack';
import type { Logger, RedisClient } from '@lifeguard/runtime';
import { MasakariApi } from '../../src/masakari-api-service.ts';
import { loadMasakariApiSettings } from '../../src/settings.ts';

/**
 * The Masakari API in this process on a free loopback port, with Masakari's noauth2 strategy (every
 * caller an admin), on `redis` under `keyPrefix`. Nova is never asked: the tests add hosts through the
 * store. `values` adds to (or replaces) its settings. Close it with `api.close()`.
 */
export async function startNoauthApi(parts: {
  redis: RedisClient;
  keyPrefix: string;
  logger: Logger;
  values?: Record<string, string>;
}): Promise<{ api: MasakariApi; base: string }> {
  const settings = loadMasakariApiSettings([
    {
      name: 'test',
      values: {
        LIFEGUARD_MASAKARI_API_PORT: '0',
        LIFEGUARD_MASAKARI_API_BIND: '127.0.0.1',
        ...parts.values,
      },
    },
  ]);
  const compute = new NovaClient({
    auth: new StaticTokenAuth('none', null, { compute: 'http://127.0.0.1:9/' }),
  });
  const api = await MasakariApi.start({
    settings,
    strategy: 'noauth2',
    redis: parts.redis,
    keyPrefix: parts.keyPrefix,
    compute,
    auth: null,
    authUrl: null,
    logger: parts.logger,
  });
  return { api, base: `http://127.0.0.1:${api.port}` };
}
