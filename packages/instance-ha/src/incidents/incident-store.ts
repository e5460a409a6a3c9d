import {
  type HostDownEvidence,
  HostDownEvidence as HostDownEvidenceSchema,
  parseWith,
} from '@lifeguard/contracts';
import {
  defineRedisScripts,
  type RedisClient,
  type RedisScript,
  redisKey,
  runScript,
} from '@lifeguard/runtime';
import type { z } from 'zod';
import {
  IncidentClosedError,
  IncidentNotFencedError,
  IncidentNotFoundError,
  IncidentRecordError,
  NoOpenIncidentError,
} from '../errors.ts';
import { shortHostname } from '../services/short-hostname.ts';
import {
  FENCED_STATES,
  FenceRecord as FenceRecordSchema,
  Incident,
  type IncidentState,
  type Incident as IncidentType,
  STATE_ORDER,
} from './incident.ts';
import { newIncidentId } from './incident-id.ts';

// KEYS[1] host's open pointer, KEYS[2] open set, KEYS[3] recent (sorted by opening time),
// KEYS[4] the new incident's key. ARGV[1] incident key prefix, ARGV[2] new record, ARGV[3] new id,
// ARGV[4] score (ms), ARGV[5] how many recent incidents to keep.
// The host's open incident if there is one ({0, record}); else the new one is stored ({1, record}).
const OPEN: RedisScript = {
  command: 'instanceHaIncidentOpen',
  lua: `
local existing = redis.call('GET', KEYS[1])
if existing then
  local body = redis.call('GET', ARGV[1] .. existing)
  if body then return {0, body} end
end
redis.call('SET', KEYS[4], ARGV[2])
redis.call('SET', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[3])
local keep = tonumber(ARGV[5])
local count = redis.call('ZCARD', KEYS[3])
if count > keep then redis.call('ZREMRANGEBYRANK', KEYS[3], 0, count - keep - 1) end
return {1, ARGV[2]}
`,
};

// KEYS[1] incident key, KEYS[2] host's open pointer, KEYS[3] open set. ARGV[1] the record as read,
// ARGV[2] the new record, ARGV[3] '1' when the incident closes, ARGV[4] its id, ARGV[5] retention (s).
// Compare-and-set: writes only if nobody changed the record since it was read (1), else 0.
const COMPARE_AND_SET: RedisScript = {
  command: 'instanceHaIncidentCompareAndSet',
  lua: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[3] == '1' then
  if redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
  redis.call('SREM', KEYS[3], ARGV[4])
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
end
return 1
`,
};

/** Closed incidents are kept this long, in seconds (30 days). */
export const CLOSED_INCIDENT_RETENTION_SECONDS = 30 * 24 * 3600;
/** How many incidents `listRecent` can reach back. */
export const RECENT_INCIDENTS_KEPT = 10_000;

export interface OpenIncidentInput {
  host: string;
  serviceId: string;
  fencingToken: number;
  kdumpFenced: boolean;
  evidence: HostDownEvidence;
  /** Opened for a host already fenced and marked (default false). */
  resume?: boolean;
  /**
   * The id to open the incident under, instead of a new one: the id a lifeguard `disabled_reason`
   * marker carries, when the incident is rebuilt after Redis lost its memory.
   */
  incidentId?: string;
  now?: Date;
}

type Mutation = (incident: IncidentType) => IncidentType;

/**
 * Incidents in Redis, shared by every node-monitor replica and the fencing and evacuation workers:
 * one open incident per host (by short hostname) at a time. Keys (under the deployment prefix):
 * `<prefix>:instance-ha:incident:<id>` (JSON), `<prefix>:instance-ha:open-by-host:<short host>`
 * (the open incident's id), `<prefix>:instance-ha:open` (set of open ids) and
 * `<prefix>:instance-ha:recent` (ids by opening time). Opening is one Lua script; every change is a
 * compare-and-set retried on conflict, so concurrent writers never lose an update. The open-incident
 * script reads a key derived from the pointer: on Redis Cluster put a `{hash tag}` in the prefix.
 */
export class IncidentStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    defineRedisScripts(redis, [OPEN, COMPARE_AND_SET]);
  }

  private key(...parts: string[]): string {
    return redisKey(this.keyPrefix, 'instance-ha', ...parts);
  }

  private incidentKey(incidentId: string): string {
    return this.key('incident', incidentId);
  }

  private hostKey(host: string): string {
    return this.key('open-by-host', shortHostname(host));
  }

  private parse(key: string, body: string): IncidentType {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (error) {
      throw new IncidentRecordError(key, `not JSON: ${(error as Error).message}`);
    }
    const result = Incident.safeParse(json);
    if (!result.success) {
      throw new IncidentRecordError(
        key,
        result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
      );
    }
    return result.data;
  }

  /**
   * Returns the host's open incident, or atomically opens a new one with a new stable id
   * (`<short host>.<yyyymmddThhmmssZ>.<4 hex>`, or `input.incidentId`) in state `open`.
   * @returns the incident and whether this call created it
   * @throws ContractViolationError when `evidence` breaks the HostDownEvidence contract
   */
  async openIncident(input: OpenIncidentInput): Promise<{ incident: IncidentType; created: boolean }> {
    const now = input.now ?? new Date();
    const evidence = parseWith(HostDownEvidenceSchema, input.evidence, 'host-down evidence');
    const id = input.incidentId ?? newIncidentId(input.host, now);
    const candidate: IncidentType = {
      id,
      host: input.host,
      serviceId: input.serviceId,
      state: 'open',
      openedAt: now.toISOString(),
      updatedAt: now.toISOString(),
      fencingToken: input.fencingToken,
      kdumpFenced: input.kdumpFenced,
      resume: input.resume ?? false,
      evidence,
      fence: null,
      closedAt: null,
      outcome: null,
      lastPublishedAt: null,
      publishCount: 0,
      lastPublishedFencingToken: null,
    };
    const record = JSON.stringify(Incident.parse(candidate));
    const [created, body] = (await runScript(
      this.redis,
      OPEN,
      [this.hostKey(input.host), this.key('open'), this.key('recent'), this.incidentKey(id)],
      [this.key('incident', ''), record, id, String(now.getTime()), String(RECENT_INCIDENTS_KEPT)],
    )) as [number, string];
    return { incident: this.parse(this.incidentKey(id), body), created: created === 1 };
  }

  /** The host's open incident (by short hostname), or null. */
  async getOpenIncident(host: string): Promise<IncidentType | null> {
    const id = await this.redis.get(this.hostKey(host));
    return id === null ? null : this.get(id);
  }

  /** An incident by id, or null. @throws IncidentRecordError for a damaged record */
  async get(incidentId: string): Promise<IncidentType | null> {
    const key = this.incidentKey(incidentId);
    const body = await this.redis.get(key);
    return body === null ? null : this.parse(key, body);
  }

  private async mutate(incidentId: string, mutation: Mutation): Promise<IncidentType> {
    const key = this.incidentKey(incidentId);
    for (let attempt = 0; ; attempt++) {
      const body = await this.redis.get(key);
      if (body === null) throw new IncidentNotFoundError(incidentId);
      const current = this.parse(key, body);
      const next = mutation(current);
      if (next === current) return current;
      const closing = next.state === 'closed' && current.state !== 'closed';
      const written = await runScript(
        this.redis,
        COMPARE_AND_SET,
        [key, this.hostKey(current.host), this.key('open')],
        [
          body,
          JSON.stringify(Incident.parse(next)),
          closing ? '1' : '0',
          incidentId,
          String(CLOSED_INCIDENT_RETENTION_SECONDS),
        ],
      );
      if (written === 1) return next;
      if (attempt >= 50) throw new Error(`incident ${incidentId}: too many concurrent updates`);
    }
  }

  /**
   * Moves an incident to `state`. Safe when repeated: the same state, or an earlier one than the
   * current (a redelivered step), leaves the incident unchanged; out of `failed` any state may follow.
   * @throws IncidentNotFoundError, IncidentClosedError (closed is final; use `close`),
   *   IncidentNotFencedError for `fenced`/`evacuating`/`evacuated` without a fence record
   */
  async setState(incidentId: string, state: IncidentState): Promise<IncidentType> {
    return this.mutate(incidentId, (incident) => {
      if (incident.state === 'closed' || state === 'closed') {
        if (incident.state === 'closed' && state === 'closed') return incident;
        throw new IncidentClosedError(incidentId, state);
      }
      if (FENCED_STATES.has(state) && incident.fence === null)
        throw new IncidentNotFencedError(incidentId, state);
      if (incident.state === state) return incident;
      const movingBack = STATE_ORDER[state] < STATE_ORDER[incident.state];
      if (movingBack && incident.state !== 'failed') return incident;
      return { ...incident, state, updatedAt: new Date().toISOString() };
    });
  }

  /**
   * Records how the host was fenced and moves an `open`/`fencing` incident to `fenced`. Idempotent:
   * the first proof wins; later calls return the incident unchanged.
   * @throws IncidentNotFoundError; IncidentClosedError when closed without a fence;
   *   ContractViolationError for an invalid record
   */
  async recordFence(incidentId: string, record: z.input<typeof FenceRecordSchema>): Promise<IncidentType> {
    const fence = parseWith(FenceRecordSchema, record, 'fence record');
    return this.mutate(incidentId, (incident) => {
      if (incident.fence !== null) return incident;
      if (incident.state === 'closed') throw new IncidentClosedError(incidentId, 'fenced');
      const state = STATE_ORDER[incident.state] < STATE_ORDER.fenced ? 'fenced' : incident.state;
      return { ...incident, fence, state, updatedAt: new Date().toISOString() };
    });
  }

  /**
   * An operator vouches that the host is off (e.g. its BMC lost power with it): records proof
   * `operator-confirmed` (method `operator`) on the host's open incident. The first proof wins.
   * @param reportingOverride the evidence of a reporting host the operator overrode, or null
   * @throws NoOpenIncidentError when the host has no open incident
   */
  async confirmFencedByOperator(
    host: string,
    operator: string,
    note: string | null,
    reportingOverride: string | null = null,
  ): Promise<IncidentType> {
    const incident = await this.getOpenIncident(host);
    if (incident === null) throw new NoOpenIncidentError(host);
    return this.recordFence(incident.id, {
      proof: 'operator-confirmed',
      method: 'operator',
      at: new Date().toISOString(),
      by: operator,
      note,
      reportingOverride,
    });
  }

  /**
   * Closes an incident with an outcome (`reenabled`, `closed by <operator>`, ...); the host may get a
   * new incident afterwards. The record is kept 30 days. Closing twice keeps the first outcome.
   * @throws IncidentNotFoundError
   */
  async close(incidentId: string, outcome: string): Promise<IncidentType> {
    return this.mutate(incidentId, (incident) => {
      if (incident.state === 'closed') return incident;
      const now = new Date().toISOString();
      return { ...incident, state: 'closed', closedAt: now, outcome, updatedAt: now };
    });
  }

  /**
   * Notes that `host.down` was published for the incident (time, count, and the highest fencing
   * token it was published with).
   */
  async recordPublished(
    incidentId: string,
    at: Date = new Date(),
    fencingToken: number | null = null,
  ): Promise<IncidentType> {
    return this.mutate(incidentId, (incident) => ({
      ...incident,
      lastPublishedAt: at.toISOString(),
      publishCount: incident.publishCount + 1,
      lastPublishedFencingToken:
        fencingToken === null
          ? incident.lastPublishedFencingToken
          : Math.max(fencingToken, incident.lastPublishedFencingToken ?? 0),
    }));
  }

  private async many(ids: ReadonlyArray<string>): Promise<IncidentType[]> {
    if (ids.length === 0) return [];
    const keys = ids.map((id) => this.incidentKey(id));
    const bodies = await this.redis.mget(...keys);
    const incidents: IncidentType[] = [];
    bodies.forEach((body, index) => {
      if (body !== null) incidents.push(this.parse(keys[index]!, body));
    });
    return incidents;
  }

  /** Every open incident, oldest first. */
  async listOpen(): Promise<IncidentType[]> {
    const incidents = await this.many(await this.redis.smembers(this.key('open')));
    return incidents
      .filter((incident) => incident.state !== 'closed')
      .sort((a, b) => a.openedAt.localeCompare(b.openedAt));
  }

  /** Open incidents by short hostname (what the categorisation rules need). */
  async openByShortHost(): Promise<Map<string, IncidentType>> {
    return new Map((await this.listOpen()).map((incident) => [shortHostname(incident.host), incident]));
  }

  /** The `count` most recently opened incidents (open or closed), newest first. */
  async listRecent(count: number): Promise<IncidentType[]> {
    if (count <= 0) return [];
    return this.many(await this.redis.zrevrange(this.key('recent'), 0, count - 1));
  }
}
