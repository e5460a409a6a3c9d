import {
  type EvacuabilityContext,
  evacuableFlavors,
  evacuableImageIds,
  INSTANCE_HA_CONSTANTS,
  type InstanceHaConfig,
  withExtraSpecs,
} from '@lifeguard/instance-ha';
import type { ComputeApi, ImageApi, Server } from '@lifeguard/openstack';
import type { Logger } from '@lifeguard/runtime';

/** What G5 judges a cycle's failed hosts on, as read: their servers and the tagging context. */
export interface EvacuabilityReading {
  /** Each host's servers (`all_tenants`), or null when the list failed (G5 keeps the host: fail-open). */
  readonly servers: ReadonlyMap<string, ReadonlyArray<Server> | null>;
  readonly context: EvacuabilityContext;
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
 * The reads of gate G5 (docs/instance-ha-rules.md#g5-evacuability, `_prepare_evacuation_resources`);
 * the decision is instance-ha's judgeEvacuability. It refreshes the evacuable flavor and image
 * caches (forced whenever a cycle has failed hosts; otherwise they live 300 s; a failed refresh keeps
 * the previous list) and lists each failed host's servers (`all_tenants`; a failed list is logged and
 * read as null). lifeguard reads images from every page and counts image properties as well as tags.
 */
export class EvacuabilityReader {
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
   * Reads the servers of `hosts` and refreshes the tagging context, at the same time: a failed host
   * waits for one round of requests.
   */
  async read(hosts: ReadonlyArray<string>): Promise<EvacuabilityReading> {
    if (hosts.length === 0) return { servers: new Map(), context: this.context() };
    const refreshed = Promise.all([this.refreshFlavors(true), this.refreshImages(true)]);
    const listed = await mapLimited(hosts, this.serverQueryConcurrency, async (host) => {
      try {
        return [host, await this.compute.listServers({ host, allTenants: true })] as const;
      } catch (error) {
        this.logger.warn({ err: error, host }, 'servers of a failed host could not be listed; keeping it');
        return [host, null] as const;
      }
    });
    await refreshed;
    return { servers: new Map<string, ReadonlyArray<Server> | null>(listed), context: this.context() };
  }
}
