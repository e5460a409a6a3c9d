import {
  type Incident,
  type LoadInstanceHaConfigOptions,
  loadInstanceHaConfig,
  shortHostname,
} from '@lifeguard/instance-ha';
import { type HostReporting, judgeHostReporting, lastHeartbeat } from '@lifeguard/operator-views';
import type { ActionConnections } from '../action-connections.ts';
import { HostIsReportingError, OperatorError } from '../operator-error.ts';

/** What the operator declares with `confirm-fenced`. */
export interface ConfirmFencedRequest {
  /** Who confirms (recorded with the time). */
  readonly operator: string;
  /** Why they are sure, e.g. `rack 12 PDU off`. */
  readonly note?: string | null;
  /**
   * DELTA: a report or heartbeat younger than this, in seconds, means the host runs (default:
   * configuredDeltaSeconds()).
   */
  readonly deltaSeconds?: number;
  /** Record the confirmation although the host reports (the evidence is recorded with it). */
  readonly hostIsReportingOverride?: boolean;
}

/**
 * How `confirm-fenced` ended, with the incident as it is now: `recorded` (this confirmation is its
 * fence proof), `already-fenced` (it had a proof before: nothing recorded), or `fenced-meanwhile`
 * (another proof was recorded between the check and the write: this one was not needed).
 */
export interface ConfirmFencedOutcome {
  readonly kind: 'recorded' | 'already-fenced' | 'fenced-meanwhile';
  readonly incident: Incident;
}

/**
 * The last step before the proof is recorded: the caller shows what is about to happen (the incident,
 * and the evidence being overridden, if any) and confirms (a prompt, `--yes`, the console's operator
 * token); it throws to stop, and nothing is recorded.
 */
export type ConfirmBeforeRecording = (pending: {
  readonly incident: Incident;
  /** The host's reports the override sets aside (`;`-separated), or null when it reports nothing. */
  readonly overriddenEvidence: string | null;
}) => Promise<void>;

/**
 * DELTA in seconds as the node monitor reads it: config.yaml (INSTANCEHA_CONFIG_PATH, else the default
 * path) with its environment override, so a confirmation judges "reporting" by the deployment's DELTA
 * and not by InstanceHA's default (docs/instance-ha-rules.md#delta). A missing config.yaml gives the
 * default, 30.
 * @throws ConfigError naming the key or file when config.yaml is invalid
 */
export function configuredDeltaSeconds(options: LoadInstanceHaConfigOptions = {}): number {
  return loadInstanceHaConfig(options).config.deltaSeconds;
}

/**
 * Whether Nova lists a `nova-compute` service on the host, by its name or its short name (as the
 * incidents match it); null when Nova cannot be read.
 */
async function novaKnowsHost(connections: ActionConnections, host: string): Promise<boolean | null> {
  try {
    const services = await connections.openstack().compute.listServices({ binary: 'nova-compute' });
    return services.some((service) => shortHostname(service.host) === shortHostname(host));
  } catch {
    return null;
  }
}

/**
 * Reads the host's own reports (Nova's service, the last heartbeat).
 * @throws OperatorError when Nova cannot be read: a confirmation needs the evidence, or the override
 */
async function readReporting(
  connections: ActionConnections,
  host: string,
  deltaSeconds: number,
): Promise<HostReporting> {
  try {
    const [services, heartbeat] = await Promise.all([
      connections.openstack().compute.listServices({ binary: 'nova-compute', host }),
      lastHeartbeat(await connections.redis(), connections.keyPrefix, host),
    ]);
    return judgeHostReporting(services[0] ?? null, heartbeat, deltaSeconds);
  } catch (error) {
    throw new OperatorError(
      `cannot check whether ${host} still reports (${(error as Error).message}); nothing was recorded`,
      ['Nova must show the host silent before a confirmation is recorded; see --host-is-reporting-override.'],
    );
  }
}

/**
 * Records an operator's proof that the host is powered off (`lifeguard host confirm-fenced`, the
 * console's confirm form) on its open incident. Refused, with nothing recorded, while the host reports
 * to Nova or sends heartbeats, unless `hostIsReportingOverride` is set; the overridden evidence is
 * then recorded in the fence record. `confirm` runs last, before the write.
 * @throws OperatorError without an open incident or when Nova cannot be read; HostIsReportingError
 *   while the host reports
 */
export async function confirmFenced(
  connections: ActionConnections,
  host: string,
  request: ConfirmFencedRequest,
  confirm: ConfirmBeforeRecording,
): Promise<ConfirmFencedOutcome> {
  const store = await connections.incidents();
  const incident = await store.getOpenIncident(host);
  if (incident === null) {
    if ((await novaKnowsHost(connections, host)) === false) {
      throw new OperatorError(
        `Nova has no compute host ${host}: there is nothing to confirm, nothing was recorded`,
        ['Compute hosts are named as Nova lists them: see `lifeguard hosts`.'],
      );
    }
    throw new OperatorError(
      `${host} has no open incident: there is nothing to confirm, nothing was recorded`,
      [
        'An operator confirmation applies to the incident lifeguard opened when the node monitor declared the host down.',
        'See `lifeguard incidents` and `lifeguard hosts`.',
      ],
    );
  }
  if (incident.fence !== null) return { kind: 'already-fenced', incident };
  const deltaSeconds = request.deltaSeconds ?? configuredDeltaSeconds();
  const reporting = await readReporting(connections, host, deltaSeconds);
  if (reporting.reporting && !request.hostIsReportingOverride) {
    throw new HostIsReportingError(host, reporting.evidence, [
      'A host that reports is running: evacuating it would run its instances twice. Check the machine',
      '(BMC, PDU outlet, console): power it off, or cut it off the network and storage, and wait until',
      'Nova shows it silent. If you are certain it is off or isolated and only its reports mislead, run',
      'this again with --host-is-reporting-override (recorded with your name).',
    ]);
  }
  const overriddenEvidence = reporting.reporting ? reporting.evidence.join('; ') : null;
  await confirm({ incident, overriddenEvidence });
  const updated = await store.confirmFencedByOperator(
    host,
    request.operator,
    request.note ?? null,
    overriddenEvidence,
  );
  const fence = updated.fence!;
  const ours = fence.proof === 'operator-confirmed' && fence.by === request.operator;
  return { kind: ours ? 'recorded' : 'fenced-meanwhile', incident: updated };
}
