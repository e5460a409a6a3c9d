import { z } from 'zod';
import { Timestamp } from '../events/identifiers.ts';

/**
 * What a running lifeguard process writes about itself in Redis, under
 * `<prefix>:workers:<service>:<instance>` with a time to live, refreshed while it runs and deleted on
 * shutdown (runtime's WorkerRegistry). `lifeguard status` lists these records as the workers that are
 * up; a record whose key expired belongs to a process that died without shutting down.
 */
export const WorkerHeartbeat = z.object({
  /**
   * The service name: `provisioning-blocks`, `port-status`, `node-monitor`, `fencing-worker`,
   * `evacuation-worker`, `instance-restart-worker`, `masakari-api`, `masakari-engine`.
   */
  service: z.string().min(1),
  /** The process instance name (LIFEGUARD_INSTANCE_NAME, default `<hostname>:<pid>`). */
  instance: z.string().min(1),
  pid: z.number().int().positive(),
  /** The machine's host name (os.hostname()). */
  host: z.string().min(1),
  /** Address and port of the process's health and metrics server (`/healthz`, `/readyz`, `/metrics`). */
  httpHost: z.string().min(1),
  httpPort: z.number().int().min(0).max(65535),
  /** ISO 8601 time the process finished starting. */
  startedAt: Timestamp,
  /** ISO 8601 time of the last refresh of this record. */
  refreshedAt: Timestamp,
  /** The lifeguard version the process runs. */
  version: z.string().min(1),
});
export type WorkerHeartbeat = z.infer<typeof WorkerHeartbeat>;

/**
 * The kinds of lifeguard worker process a deployment runs. `port-status` is the port-status
 * subscriber: a process of its own (LIFEGUARD_PROVISIONING_ROLE `port-status`) or part of
 * provisioning-blocks (role `all`).
 */
export const WORKER_KINDS = [
  'provisioning-blocks',
  'port-status',
  'node-monitor',
  'fencing-worker',
  'evacuation-worker',
  'instance-restart-worker',
  'masakari-api',
  'masakari-engine',
] as const;
export type WorkerKind = (typeof WORKER_KINDS)[number];
