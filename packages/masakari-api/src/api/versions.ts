/**
 * The version documents (docs/masakari-api.md#4-version-documents): `GET /` lists v1.0 with its
 * microversion range; `GET /v1/` describes it. Clients (keystoneauth discovery, openstacksdk) read
 * `min_version` and `version` from them to choose a microversion.
 */
import { MAX_MICROVERSION, MIN_MICROVERSION, microversionText } from './microversion.ts';

const UPDATED = '2016-07-01T11:33:21Z';

const common = () => ({
  id: 'v1.0',
  status: 'CURRENT',
  version: microversionText(MAX_MICROVERSION),
  min_version: microversionText(MIN_MICROVERSION),
  updated: UPDATED,
});

/** `GET /`; `baseUrl` is the service's URL without a trailing slash. */
export function versionsDocument(baseUrl: string): Record<string, unknown> {
  return { versions: [{ ...common(), links: [{ rel: 'self', href: `${baseUrl}/v1/` }] }] };
}

/** `GET /v1/`. */
export function versionDocument(baseUrl: string): Record<string, unknown> {
  return {
    version: {
      ...common(),
      links: [
        { rel: 'self', href: `${baseUrl}/v1/` },
        { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
      ],
      'media-types': [
        { base: 'application/json', type: 'application/vnd.openstack.masakari+json;version=1' },
      ],
    },
  };
}
