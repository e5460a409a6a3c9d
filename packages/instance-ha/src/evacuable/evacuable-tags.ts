import type { Aggregate, Flavor, Image, Server } from '@lifeguard/openstack';

/**
 * The evacuable-tag rules of docs/instance-ha-rules.md#evacuable-tags, as pure functions. T is EVACUABLE_TAG
 * (default `evacuable`). Values are compared as strings, lower-cased, against `true`.
 */

function isTrue(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

/**
 * True when a mapping has key T, or any key containing T (`trait:CUSTOM_evacuable`,
 * `aggregate_instance_extra_specs:evacuable`), whose value is `true` (case-insensitive).
 */
export function hasEvacuableKey(
  mapping: Readonly<Record<string, unknown>> | null | undefined,
  tag: string,
): boolean {
  if (!mapping) return false;
  for (const [key, value] of Object.entries(mapping)) {
    if (key.includes(tag) && isTrue(value)) return true;
  }
  return false;
}

/** A flavor is evacuable when its extra specs carry T (or a key containing T) = `true`. */
export function isEvacuableFlavor(
  extraSpecs: Readonly<Record<string, string>> | null | undefined,
  tag: string,
): boolean {
  return hasEvacuableKey(extraSpecs, tag);
}

/** Image fields that are Glance's own, never custom properties. */
const GLANCE_CORE_FIELDS = new Set([
  'id',
  'name',
  'status',
  'tags',
  'visibility',
  'protected',
  'checksum',
  'owner',
  'size',
  'virtual_size',
  'min_ram',
  'min_disk',
  'disk_format',
  'container_format',
  'created_at',
  'updated_at',
  'file',
  'self',
  'schema',
  'locations',
  'direct_url',
  'os_hidden',
  'os_hash_algo',
  'os_hash_value',
]);

/**
 * An image is evacuable when its `tags` contain T or a tag containing T (InstanceHA's rule), or — a
 * lifeguard difference (docs/instance-ha-rules.md#evacuable-tags) — a custom property T (or containing T) is
 * `true`. Glance v2 returns custom properties (`openstack image set --property evacuable=true`) as
 * top-level fields; a nested `properties`/`metadata` mapping is honoured too.
 */
export function isEvacuableImage(image: Image | Readonly<Record<string, unknown>>, tag: string): boolean {
  const body = image as Readonly<Record<string, unknown>>;
  const tags = Array.isArray(body.tags) ? body.tags : [];
  if (tags.some((each) => typeof each === 'string' && each.includes(tag))) return true;
  for (const [key, value] of Object.entries(body)) {
    if (GLANCE_CORE_FIELDS.has(key)) continue;
    if (key.includes(tag) && isTrue(value)) return true;
  }
  for (const nested of ['properties', 'metadata']) {
    const mapping = body[nested];
    if (mapping && typeof mapping === 'object' && !Array.isArray(mapping)) {
      if (hasEvacuableKey(mapping as Record<string, unknown>, tag)) return true;
    }
  }
  return false;
}

/** An aggregate is evacuable when its metadata has T (or a key containing T) = `true` (HEAD rule). */
export function isEvacuableAggregate(aggregate: Pick<Aggregate, 'metadata'>, tag: string): boolean {
  return hasEvacuableKey(aggregate.metadata, tag);
}

/**
 * The ids of evacuable images, from every page of the image list (the caller lists them all;
 * InstanceHA only read the first page, docs/instance-ha-rules.md#evacuable-tags).
 */
export function evacuableImageIds(images: ReadonlyArray<Image>, tag: string): Set<string> {
  return new Set(images.filter((image) => isEvacuableImage(image, tag)).map((image) => image.id));
}

/** A flavor with its extra specs (from the flavor body at 2.61+, or `os-extra_specs`). */
export interface FlavorWithExtraSpecs {
  readonly id: string;
  readonly name: string;
  readonly extraSpecs: Readonly<Record<string, string>>;
}

/** The evacuable flavors: ids and names (Nova flavor names are unique). */
export interface EvacuableFlavors {
  readonly ids: ReadonlySet<string>;
  readonly names: ReadonlySet<string>;
}

export function evacuableFlavors(
  flavors: ReadonlyArray<FlavorWithExtraSpecs>,
  tag: string,
): EvacuableFlavors {
  const tagged = flavors.filter((flavor) => isEvacuableFlavor(flavor.extraSpecs, tag));
  return {
    ids: new Set(tagged.map((flavor) => flavor.id)),
    names: new Set(tagged.map((flavor) => flavor.name)),
  };
}

/** Pairs flavors from `GET /flavors/detail` with extra specs (their own, or looked up by id). */
export function withExtraSpecs(
  flavors: ReadonlyArray<Flavor>,
  lookup: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(),
): FlavorWithExtraSpecs[] {
  return flavors.map((flavor) => ({
    id: flavor.id,
    name: flavor.name,
    extraSpecs: flavor.extra_specs ?? lookup.get(flavor.id) ?? {},
  }));
}

/** What the per-server decision needs: the switches and what the cloud has tagged. */
export interface EvacuabilityContext {
  /** EVACUABLE_TAG. */
  readonly tag: string;
  /** TAGGED_IMAGES. */
  readonly taggedImages: boolean;
  /** TAGGED_FLAVORS. */
  readonly taggedFlavors: boolean;
  /** Evacuable image ids (every page). */
  readonly evacuableImageIds: ReadonlySet<string>;
  /** Evacuable flavors. */
  readonly evacuableFlavors: EvacuableFlavors;
}

/**
 * True when no enabled kind (images with TAGGED_IMAGES, flavors with TAGGED_FLAVORS) has any tagged
 * resource in the cloud: then every server is evacuable ("no tags configured yet means evacuate
 * everything", fail-open, docs/instance-ha-rules.md#evacuable-tags).
 */
export function taggingInEffect(context: EvacuabilityContext): boolean {
  const images = context.taggedImages && context.evacuableImageIds.size > 0;
  const flavors = context.taggedFlavors && context.evacuableFlavors.ids.size > 0;
  return images || flavors;
}

/**
 * InstanceHA's `is_server_evacuable` (docs/instance-ha-rules.md#evacuable-tags): both switches off → true; nothing tagged of an
 * enabled kind → true (fail-open); otherwise the image matches (its id is an evacuable image) OR the
 * flavor matches (the embedded flavor's extra specs carry T = true; when the server body has no
 * extra specs — before 2.47 or without admin policy — its `original_name` is looked up among the
 * evacuable flavors, a lifeguard addition). Boot-from-volume servers never match by image.
 */
export function isServerEvacuable(server: Server, context: EvacuabilityContext): boolean {
  if (!context.taggedImages && !context.taggedFlavors) return true;
  if (!taggingInEffect(context)) return true;
  if (context.taggedImages && context.evacuableImageIds.size > 0) {
    const image = server.image;
    if (image && typeof image === 'object' && context.evacuableImageIds.has(image.id)) return true;
  }
  if (context.taggedFlavors && context.evacuableFlavors.ids.size > 0) {
    const flavor = server.flavor;
    if (flavor?.extra_specs !== undefined) {
      if (isEvacuableFlavor(flavor.extra_specs, context.tag)) return true;
    } else if (
      flavor?.original_name !== undefined &&
      context.evacuableFlavors.names.has(flavor.original_name)
    ) {
      return true;
    }
  }
  return false;
}

/** The result of the aggregate rule for a set of hosts. */
export interface AggregateFilterResult {
  /** Hosts listed in at least one evacuable aggregate (exact match of the service host). */
  readonly kept: ReadonlyArray<string>;
  readonly dropped: ReadonlyArray<string>;
  /** True when no aggregate is tagged, so no host is kept (fail-closed). */
  readonly noTaggedAggregate: boolean;
}

/**
 * TAGGED_AGGREGATES (docs/instance-ha-rules.md#g5-evacuability step 5): keep hosts listed in an evacuable aggregate; when no
 * aggregate is tagged no host survives (fail-closed). (When the aggregate list cannot be read the
 * caller does not filter at all: fail-open.)
 */
export function filterHostsByEvacuableAggregates(
  hosts: ReadonlyArray<string>,
  aggregates: ReadonlyArray<Pick<Aggregate, 'hosts' | 'metadata'>>,
  tag: string,
): AggregateFilterResult {
  const evacuable = aggregates.filter((aggregate) => isEvacuableAggregate(aggregate, tag));
  const members = new Set(evacuable.flatMap((aggregate) => aggregate.hosts));
  return {
    kept: hosts.filter((host) => members.has(host)),
    dropped: hosts.filter((host) => !members.has(host)),
    noTaggedAggregate: evacuable.length === 0,
  };
}

/** The hosts of every evacuable aggregate (exact service host names). */
export function hostsInEvacuableAggregates(
  aggregates: ReadonlyArray<Pick<Aggregate, 'hosts' | 'metadata'>>,
  tag: string,
): Set<string> {
  return new Set(
    aggregates
      .filter((aggregate) => isEvacuableAggregate(aggregate, tag))
      .flatMap((aggregate) => aggregate.hosts),
  );
}
