import { keystoneContract } from './keystone-contract.ts';
import { realNovaEnvironment } from './support/real-nova-target.ts';

// The Keystone contract against the harness's real Keystone (Zed) and the nova-api behind it
// (`npm test` starts the harness with RN_KEYSTONE=1 when this file is selected).
keystoneContract(async () => {
  const settings = realNovaEnvironment();
  const authUrl = process.env.KEYSTONE_URL;
  const computeUrl = process.env.KEYSTONE_NOVA_URL;
  if (!authUrl || !computeUrl) {
    throw new Error(
      'the real-Nova harness runs without Keystone (KEYSTONE_URL/KEYSTONE_NOVA_URL missing): stop it and let `npm test` start it, or start it with RN_KEYSTONE=1 RN_KEYSTONE_NOVA_PORT=<port>',
    );
  }
  return {
    label: 'real Keystone',
    authUrl,
    computeUrl,
    region: process.env.RN_KEYSTONE_REGION ?? 'RegionOne',
    adminPassword: process.env.RN_KEYSTONE_ADMIN_PASSWORD ?? 'admin',
    hosts: settings.hosts,
    close: async () => {},
  };
});
