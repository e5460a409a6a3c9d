import { z } from 'zod';
import { eventBase as base } from './event-base.ts';
import { HostName, IncidentId } from './identifiers.ts';

/**
 * Redis lost its memory (restarted without persistence, or its database flushed): the node monitor
 * found the deployment generation marker missing or replaced, and rebuilt what it could from Nova's
 * `disabled_reason` markers (docs/failure-modes.md#redis-restarted-empty). Published once per lost
 * generation, after the rebuild.
 */
export const RedisMemoryLostEvent = z.object({
  ...base,
  type: z.literal('redis.memory.lost'),
  data: z.object({
    /** The generation whose memory was lost. */
    lostGenerationId: z.string().min(1),
    /** The generation written after the loss. */
    generationId: z.string().min(1),
    /** Incidents re-opened from lifeguard's in-progress markers; each re-checks the world and is fenced again. */
    restoredIncidents: z.array(z.object({ host: HostName, incidentId: IncidentId })),
    /** Hosts whose marker says evacuated: left to the re-enable rules. */
    awaitingReenable: z.array(HostName),
    /** Hosts whose marker says the evacuation FAILED: left to an operator. */
    awaitingOperator: z.array(HostName),
  }),
});
