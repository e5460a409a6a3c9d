import {
  type EvacuabilityContext,
  evacuableFlavors,
  evacuableImageIds,
  filterHostsByEvacuableAggregates,
  INSTANCE_HA_CONSTANTS,
  type InstanceHaConfig,
  isServerEvacuable,
  type ServiceView,
  withExtraSpecs,
} from '@lifeguard/instance-ha';
import type { Aggregate, ComputeApi, ImageApi, Server } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';

/** Why gate G5 dropped a host. */
export type NotEvacuableReason = 'no-servers' | 'no-evacuable-servers' | 'not-in-evacuable-aggregate';

export interface EvacuabilityResult {
  readonly kept: ReadonlyArray<ServiceView>;
  readonly dropped: ReadonlyArray<{ service: ServiceView; reason: NotEvacuableReason }>;
  /** Hosts kept only because a query failed (fail-open), for the log. */
  readonly keptOnError: ReadonlyArray<string>;
}

type Settings = Pick<
  InstanceHaConfig,
  'evacuableTag' | 'taggedImages' | 'taggedFlavors' | 'taggedAggregates'
>;

/** Runs `work` over `items` with at most `limit` at a time, keeping the order of results. */
async function mapLimited<Item, Result>(
  items: ReadonlyArray<Item>,
  limit: number,
  work: (item: Item) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  });
  await Promise.all(runners);
  return results;
}

/**
 * Gate G5, evacuability filtering (docs/instance-ha-rules.md#g5-evacuability, `_prepare_evacuation_resources`), in order:
 * refresh the evacuable flavor and image caches (forced whenever a cycle has failed hosts; otherwise
 * they live 300 s); list each candidate host's servers (`all_tenants`) — a host with no servers is
 * dropped (never fenced, never disabled), a failed query keeps it (fail-open); with TAGGED_IMAGES or
 * TAGGED_FLAVORS keep hosts having at least one evacuable server (rules 1.9, fail-open when nothing is
 * tagged); with TAGGED_AGGREGATES keep hosts listed in an evacuable aggregate (none survive when no
 * aggregate is tagged — fail-closed; no filtering when the aggregate list failed — fail-open).
 * lifeguard reads images from every page and counts image properties as well as tags.
 */
export class EvacuabilityChecker {
  private flavorCache: { value: EvacuabilityContext['evacuableFlavors']; at: number } | null = null;
  private imageCache: { value: Set<string>; at: number } | null = null;

  constructor(
    private readonly compute: ComputeApi,
    private readonly image: ImageApi | null,
    private readonly settings: Settings,
    private readonly logger: Logger,
    private readonly serverQueryConcurrency = 8,
  ) {}

  private async refreshFlavors(force: boolean): Promise<void> {
    if (!this.settings.taggedFlavors) return;
    if (
      !force &&
      this.flavorCache &&
      Date.now() - this.flavorCache.at < INSTANCE_HA_CONSTANTS.evacuableCacheSeconds * 1000
    ) {
      return;
    }
    try {
      const flavors = await this.compute.listFlavors();
      const lookups = new Map<string, Record<string, string>>();
      const missing = flavors.filter((flavor) => flavor.extra_specs === undefined);
      await mapLimited(missing, this.serverQueryConcurrency, async (flavor) => {
        lookups.set(flavor.id, await this.compute.getFlavorExtraSpecs(flavor.id));
      });
      this.flavorCache = {
        value: evacuableFlavors(withExtraSpecs(flavors, lookups), this.settings.evacuableTag),
        at: Date.now(),
      };
    } catch (error) {
      this.logger.warn(
        { err: error },
        'evacuable flavor list could not be refreshed; keeping the previous one',
      );
    }
  }

  private async refreshImages(force: boolean): Promise<void> {
    if (!this.settings.taggedImages || this.image === null) return;
    if (
      !force &&
      this.imageCache &&
      Date.now() - this.imageCache.at < INSTANCE_HA_CONSTANTS.evacuableCacheSeconds * 1000
    ) {
      return;
    }
    try {
      this.imageCache = {
        value: evacuableImageIds(await this.image.listImages(), this.settings.evacuableTag),
        at: Date.now(),
      };
    } catch (error) {
      this.logger.warn(
        { err: error },
        'evacuable image list could not be refreshed; keeping the previous one',
      );
    }
  }

  /** The tagging context of the per-server decision, after the caches were refreshed. */
  context(): EvacuabilityContext {
    return {
      tag: this.settings.evacuableTag,
      taggedImages: this.settings.taggedImages,
      taggedFlavors: this.settings.taggedFlavors,
      evacuableImageIds: this.imageCache?.value ?? new Set(),
      evacuableFlavors: this.flavorCache?.value ?? { ids: new Set(), names: new Set() },
    };
  }

  /**
   * Filters candidate hosts. The flavor and image refreshes, the server queries and the aggregate
   * read (when given as a promise) run at the same time: a failed host waits for one round of
   * requests.
   * @param aggregates this cycle's aggregate list, or null when it could not be read (no filtering)
   */
  async filter(
    candidates: ReadonlyArray<ServiceView>,
    aggregates: ReadonlyArray<Aggregate> | null | Promise<ReadonlyArray<Aggregate> | null>,
  ): Promise<EvacuabilityResult> {
    if (candidates.length === 0) return { kept: [], dropped: [], keptOnError: [] };
    const refreshed = Promise.all([this.refreshFlavors(true), this.refreshImages(true)]);
    const dropped: Array<{ service: ServiceView; reason: NotEvacuableReason }> = [];
    const keptOnError: string[] = [];
    const listed = await mapLimited(candidates, this.serverQueryConcurrency, async (service) => {
      try {
        return { service, servers: await this.compute.listServers({ host: service.host, allTenants: true }) };
      } catch (error) {
        this.logger.warn(
          { err: error, host: service.host },
          'servers of a failed host could not be listed; keeping it',
        );
        keptOnError.push(service.host);
        return { service, servers: null as Server[] | null };
      }
    });
    await refreshed;
    const context = this.context();
    let kept: ServiceView[] = [];
    for (const { service, servers } of listed) {
      if (servers !== null && servers.length === 0) dropped.push({ service, reason: 'no-servers' });
      else if (
        servers !== null &&
        (this.settings.taggedImages || this.settings.taggedFlavors) &&
        !servers.some((server) => isServerEvacuable(server, context))
      ) {
        dropped.push({ service, reason: 'no-evacuable-servers' });
      } else kept.push(service);
    }
    const aggregateList = await aggregates;
    if (this.settings.taggedAggregates && aggregateList !== null) {
      const byAggregate = filterHostsByEvacuableAggregates(
        kept.map((service) => service.host),
        aggregateList,
        this.settings.evacuableTag,
      );
      const survivors = new Set(byAggregate.kept);
      for (const service of kept) {
        if (!survivors.has(service.host)) dropped.push({ service, reason: 'not-in-evacuable-aggregate' });
      }
      kept = kept.filter((service) => survivors.has(service.host));
    }
    return { kept, dropped, keptOnError };
  }
}
