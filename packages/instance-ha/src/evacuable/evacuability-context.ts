import type { ComputeApi, ImageApi } from '@lifeguard/openstack';
import type { Logger } from 'pino';
import type { InstanceHaConfig } from '../config/instance-ha-config.ts';
import {
  type EvacuabilityContext,
  evacuableFlavors,
  evacuableImageIds,
  withExtraSpecs,
} from './evacuable-tags.ts';

/**
 * The evacuable-tag context (docs/instance-ha-rules.md#evacuable-tags) from every image page and every flavor with its extra
 * specs (looked up per flavor when the list does not carry them). Returns null when a listing fails:
 * the caller then drops no server for its tags (fail-open, as InstanceHA keeps a host whose query
 * failed). Images are skipped when no Image API is configured.
 */
export async function loadEvacuabilityContext(
  compute: ComputeApi,
  image: ImageApi | null,
  config: Pick<InstanceHaConfig, 'evacuableTag' | 'taggedImages' | 'taggedFlavors'>,
  logger: Logger,
): Promise<EvacuabilityContext | null> {
  const tag = config.evacuableTag;
  try {
    const readImages = async () =>
      config.taggedImages && image !== null
        ? evacuableImageIds(await image.listImages(), tag)
        : new Set<string>();
    const readFlavors = async () => {
      if (!config.taggedFlavors) return evacuableFlavors([], tag);
      const list = await compute.listFlavors();
      const lookup = new Map<string, Record<string, string>>();
      for (const flavor of list) {
        if (flavor.extra_specs === undefined)
          lookup.set(flavor.id, await compute.getFlavorExtraSpecs(flavor.id));
      }
      return evacuableFlavors(withExtraSpecs(list, lookup), tag);
    };
    // Glance and Nova are asked at the same time.
    const [imageIds, flavors] = await Promise.all([readImages(), readFlavors()]);
    return {
      tag,
      taggedImages: config.taggedImages,
      taggedFlavors: config.taggedFlavors,
      evacuableImageIds: imageIds,
      evacuableFlavors: flavors,
    };
  } catch (error) {
    logger.warn(
      { err: error },
      'could not read evacuable images or flavors; no instance is left out for its tags',
    );
    return null;
  }
}

/**
 * The evacuable-tag context shared by the host jobs of one process for a short while: hosts that fail
 * together (a rack) are planned from one image and flavor listing instead of one each. InstanceHA
 * caches these listings for 300 s and refreshes them whenever a cycle has down hosts; lifeguard keeps
 * them `maxAgeMilliseconds` (default 30 s) and never keeps a failed listing.
 */
export class EvacuabilityCache {
  private cached: { at: number; value: Promise<EvacuabilityContext | null> } | null = null;

  constructor(
    private readonly compute: ComputeApi,
    private readonly image: ImageApi | null,
    private readonly config: Pick<InstanceHaConfig, 'evacuableTag' | 'taggedImages' | 'taggedFlavors'>,
    private readonly logger: Logger,
    private readonly maxAgeMilliseconds = 30_000,
  ) {}

  /** The context (null when a listing failed: nothing is left out for its tags). */
  get(): Promise<EvacuabilityContext | null> {
    if (this.cached && Date.now() - this.cached.at < this.maxAgeMilliseconds) return this.cached.value;
    const value = loadEvacuabilityContext(this.compute, this.image, this.config, this.logger);
    const entry = { at: Date.now(), value };
    this.cached = entry;
    void value.then((context) => {
      if (context === null && this.cached === entry) this.cached = null;
    });
    return value;
  }
}
