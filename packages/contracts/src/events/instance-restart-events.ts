import { z } from 'zod';
import { InstanceFailure } from '../jobs/instance-restart.ts';
import { eventBase as base } from './event-base.ts';
import { HostName } from './identifiers.ts';

/** What every instance restart event says about the failure it answers. */
const restartSubject = {
  instanceId: z.string().min(1),
  instanceName: z.string(),
  /** The compute host the failure was reported from. */
  host: HostName,
  failure: InstanceFailure,
  /** The Masakari notification's uuid, or null for lifeguard's own instance monitor. */
  notificationUuid: z.string().nullable(),
  /** The `instance-restart` job (`instance-restart.<instance>.<failure>`). */
  jobId: z.string().min(1),
};

/** A crashed guest's restart began: the rule chose to act and the first Nova call follows. */
export const InstanceRestartStartedEvent = z.object({
  ...base,
  type: z.literal('instance.restart.started'),
  data: z.object({
    ...restartSubject,
    /** Nova's server status when the restart began (ERROR, SHUTOFF, ACTIVE). */
    status: z.string(),
  }),
});

/** The guest is ACTIVE again: stopped, started and confirmed through Nova. */
export const InstanceRestartCompletedEvent = z.object({
  ...base,
  type: z.literal('instance.restart.completed'),
  data: z.object({
    ...restartSubject,
    /** Seconds from the failure's observation to the guest confirmed ACTIVE. */
    durationSeconds: z.number().nonnegative(),
  }),
});

/** The restart was attempted and the guest did not become ACTIVE (Masakari's `error`). */
export const InstanceRestartFailedEvent = z.object({
  ...base,
  type: z.literal('instance.restart.failed'),
  data: z.object({ ...restartSubject, reason: z.string() }),
});

/**
 * The instance was restarted too often within the hour (LIFEGUARD_INSTANCE_RESTART_MAX_PER_HOUR): it is
 * left as it is for a person. `restartsWithinHour` counts the restarts that began in the last hour.
 */
export const InstanceRestartGivenUpEvent = z.object({
  ...base,
  type: z.literal('instance.restart.given-up'),
  data: z.object({
    ...restartSubject,
    reason: z.string(),
    restartsWithinHour: z.number().int().nonnegative(),
    maxPerHour: z.number().int().nonnegative(),
  }),
});
