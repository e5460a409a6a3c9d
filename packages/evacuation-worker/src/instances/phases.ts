import type { Server } from '@lifeguard/openstack';

/** Server metadata key naming an instance's restart group (docs/instance-ha-rules.md#orchestrated_restart). */
export const RESTART_GROUP_KEY = 'instanceha:restart_group';
/** Server metadata key with an instance's restart priority: an integer, higher first. */
export const RESTART_PRIORITY_KEY = 'instanceha:restart_priority';
/** Priority of a server without a valid `instanceha:restart_priority`. */
export const DEFAULT_RESTART_PRIORITY = 500;
/** Priorities are clamped into this range. */
export const RESTART_PRIORITY_RANGE = { minimum: 1, maximum: 1000 } as const;

/** One evacuation phase: its servers are evacuated together; phases run one after the other. */
export interface EvacuationPhase<Item> {
  /** Higher runs first. */
  readonly priority: number;
  /** The restart group, or null for an ungrouped server (which is a phase of its own). */
  readonly group: string | null;
  readonly servers: ReadonlyArray<Item>;
}

/**
 * A server's restart priority: `instanceha:restart_priority` parsed as a base-10 integer (surrounding
 * blanks allowed, as Python's `int()`), clamped to 1–1000; 500 when missing or not an integer.
 */
export function restartPriority(metadata: Readonly<Record<string, string>> | undefined): number {
  const raw = metadata?.[RESTART_PRIORITY_KEY];
  if (raw === undefined) return DEFAULT_RESTART_PRIORITY;
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) return DEFAULT_RESTART_PRIORITY;
  const value = Number.parseInt(text, 10);
  return Math.min(RESTART_PRIORITY_RANGE.maximum, Math.max(RESTART_PRIORITY_RANGE.minimum, value));
}

/** A server's restart group, or null (missing or blank). */
export function restartGroup(metadata: Readonly<Record<string, string>> | undefined): string | null {
  const raw = metadata?.[RESTART_GROUP_KEY];
  return raw === undefined || raw.trim() === '' ? null : raw;
}

/**
 * ORCHESTRATED_RESTART phases (docs/instance-ha-rules.md#orchestrated_restart): servers sharing an
 * `instanceha:restart_group` form one phase whose priority is the highest of its members'; each server
 * without a group is a phase of its own; phases are ordered by descending priority, and phases of equal
 * priority keep the order in which their first server was listed. `tagged` is false when no server
 * carries either key (InstanceHA then logs a warning).
 */
export function orchestratedPhases<Item extends Pick<Server, 'metadata'>>(
  servers: ReadonlyArray<Item>,
): { phases: Array<EvacuationPhase<Item>>; tagged: boolean } {
  const groups = new Map<string, { priority: number; servers: Item[]; order: number }>();
  const phases: Array<{ priority: number; group: string | null; servers: Item[]; order: number }> = [];
  let tagged = false;
  servers.forEach((server, order) => {
    const metadata = server.metadata;
    if (metadata?.[RESTART_GROUP_KEY] !== undefined || metadata?.[RESTART_PRIORITY_KEY] !== undefined) {
      tagged = true;
    }
    const priority = restartPriority(metadata);
    const group = restartGroup(metadata);
    if (group === null) {
      phases.push({ priority, group: null, servers: [server], order });
      return;
    }
    const existing = groups.get(group);
    if (existing) {
      existing.servers.push(server);
      existing.priority = Math.max(existing.priority, priority);
    } else {
      const created = { priority, servers: [server], order };
      groups.set(group, created);
      phases.push({ priority: 0, group, servers: created.servers, order });
    }
  });
  for (const phase of phases) {
    if (phase.group !== null) phase.priority = groups.get(phase.group)!.priority;
  }
  phases.sort((a, b) => b.priority - a.priority || a.order - b.order);
  return {
    phases: phases.map(({ priority, group, servers: members }) => ({ priority, group, servers: members })),
    tagged,
  };
}

/** SMART_EVACUATION and traditional mode: one phase holding every server. */
export function singlePhase<Item>(servers: ReadonlyArray<Item>): Array<EvacuationPhase<Item>> {
  return servers.length === 0 ? [] : [{ priority: DEFAULT_RESTART_PRIORITY, group: null, servers }];
}
