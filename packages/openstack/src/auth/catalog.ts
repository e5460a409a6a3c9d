import { z } from 'zod';

/** One service of a Keystone v3 catalog (`token.catalog[]`). */
export const CatalogService = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  id: z.string().optional(),
  endpoints: z.array(
    z.looseObject({
      interface: z.string(),
      region: z.string().nullable().optional(),
      region_id: z.string().nullable().optional(),
      url: z.string(),
      id: z.string().optional(),
    }),
  ),
});
export type CatalogService = z.output<typeof CatalogService>;

/** `public`, `internal` or `admin`; keystoneauth's `publicURL`-style names are accepted too. */
export function normaliseInterface(value: string): string {
  return value.replace(/URL$/, '');
}

/**
 * Picks the endpoint URL of a service type from a catalog, as keystoneauth does: the service with
 * that `type`, an endpoint with the interface (`public` by default) and, when a region is given, that
 * region (`region_id` or `region`). Trailing slashes are removed.
 * @returns the URL, or null when the catalog has no such endpoint
 */
export function selectEndpoint(
  catalog: ReadonlyArray<CatalogService>,
  serviceType: string,
  endpointInterface: string,
  region: string | null,
): string | null {
  const wanted = normaliseInterface(endpointInterface);
  for (const service of catalog) {
    if (service.type !== serviceType) continue;
    for (const endpoint of service.endpoints) {
      if (normaliseInterface(endpoint.interface) !== wanted) continue;
      if (region && endpoint.region_id !== region && endpoint.region !== region) continue;
      return endpoint.url.replace(/\/+$/, '');
    }
  }
  return null;
}

/** What a catalog offers, for error messages: `compute (public RegionOne, internal RegionOne), image (...)`. */
export function describeCatalog(catalog: ReadonlyArray<CatalogService>): string {
  if (catalog.length === 0) return 'an empty catalog';
  return catalog
    .map(
      (service) =>
        `${service.type} (${service.endpoints.map((each) => `${each.interface} ${each.region_id ?? each.region ?? '-'}`).join(', ')})`,
    )
    .join(', ');
}
