import type { OperatorActionName } from '@lifeguard/contracts';
import {
  checkRehabilitation,
  confirmFenced,
  HostIsReportingError,
  NOVA_SERVICE_DOWN_TIME_SECONDS,
  OperatorError,
  QUIET_PROGRESS,
  RehabilitationRefusedError,
  type ReplayResult,
  rehabilitateHost,
  replayDeadLetters,
} from '@lifeguard/operator-actions';
import { z } from 'zod';
import type { ConsoleConnections } from '../connections.ts';

/** How long `rehabilitate` waits for nova-compute to report up once forced_down is lifted, in seconds. */
export const REHABILITATE_WAIT_SECONDS = 60;

/** The form of a write action, validated before anything runs. */
export const ActionForm = z.object({
  operator: z
    .string()
    .trim()
    .min(1, 'your name is needed: the action is recorded with it')
    .max(64)
    .regex(/^[^\s<>"'&]+( [^\s<>"'&]+)*$/, 'a name of letters, digits and single spaces'),
  host: z.string().trim().min(1).max(255).optional(),
  id: z.string().trim().min(1).max(64).optional(),
  note: z.string().trim().max(500).optional(),
  /** The confirm form's override checkbox (REPORTING_OVERRIDE_FIELD): `yes` when ticked, else absent. */
  'host-is-reporting-override': z
    .literal('yes', { error: 'host-is-reporting-override is "yes" (ticked) or absent' })
    .optional(),
});
export type ActionForm = z.output<typeof ActionForm>;

/** How a write action ended: `done` with its summary, or `refused` with its reason and hints. */
export interface ActionResult {
  readonly action: OperatorActionName;
  readonly outcome: 'done' | 'refused';
  readonly detail: string;
  readonly hints: ReadonlyArray<string>;
  readonly host: string | null;
  readonly incidentId: string | null;
  readonly target: string | null;
  /** What the action answered, as the `lifeguard` command prints it with `--json` (null when nothing). */
  readonly answer: unknown;
}

/** What an action that ran did: its answer, its summary, and the incident it concerned. */
interface ActionDone {
  readonly answer: unknown;
  readonly detail: string;
  readonly incidentId: string | null;
}

/** A replay asked for by the console that did not replay its dead letter; `results` says why. */
class DeadLetterNotReplayedError extends OperatorError {
  constructor(
    id: string,
    readonly results: ReadonlyArray<ReplayResult>,
  ) {
    const result = results[0];
    super(
      `dead letter ${id} was not replayed: ${result?.outcome ?? 'not-found'} ${result?.detail ?? ''}`.trim(),
    );
    this.name = 'DeadLetterNotReplayedError';
  }
}

/**
 * `lifeguard host confirm-fenced <host> --yes`: the request carried the operator token, and the
 * override only comes from the form's own field.
 */
async function confirmFencedAction(
  connections: ConsoleConnections,
  form: ActionForm,
  who: string,
): Promise<ActionDone> {
  const outcome = await confirmFenced(
    connections,
    requireField(form.host, 'host'),
    {
      operator: who,
      note: form.note ?? null,
      hostIsReportingOverride: form['host-is-reporting-override'] === 'yes',
    },
    async () => undefined,
  );
  const recorded = outcome.kind === 'recorded';
  return {
    answer: { recorded, incident: outcome.incident },
    detail: recorded ? 'operator-confirmed fence recorded' : 'the host was already fenced; nothing recorded',
    incidentId: outcome.incident.id,
  };
}

/** `lifeguard host rehabilitate <host> --yes`, waiting REHABILITATE_WAIT_SECONDS for nova-compute. */
async function rehabilitateAction(
  connections: ConsoleConnections,
  form: ActionForm,
  who: string,
): Promise<ActionDone> {
  const host = requireField(form.host, 'host');
  const checked = await checkRehabilitation(
    connections,
    host,
    { serviceDownTimeSeconds: NOVA_SERVICE_DOWN_TIME_SECONDS },
    QUIET_PROGRESS,
  );
  const done = await rehabilitateHost(
    connections,
    checked,
    { waitSeconds: REHABILITATE_WAIT_SECONDS, closedBy: who },
    QUIET_PROGRESS,
  );
  const { verdict } = checked;
  return {
    answer: { host, verdict, done },
    detail:
      done.length > 0
        ? `done: ${done.join(', ')}`
        : verdict.kind === 'nothing-to-do'
          ? verdict.reason
          : 'nothing to do',
    incidentId: null,
  };
}

/** `lifeguard dlq replay --id <id>`. */
async function replayAction(
  connections: ConsoleConnections,
  form: ActionForm,
  who: string,
): Promise<ActionDone> {
  const id = requireField(form.id, 'id');
  const results = await replayDeadLetters(await connections.amqp(), {
    limit: 1,
    ids: [id],
    replayedBy: who,
    dryRun: false,
  });
  if (results[0]?.outcome !== 'replayed') throw new DeadLetterNotReplayedError(id, results);
  return { answer: results, detail: 'replayed', incidentId: null };
}

/** What a refused action answered, as the command prints it with `--json` before its error. */
function refusalAnswer(error: OperatorError, form: ActionForm): unknown {
  if (error instanceof RehabilitationRefusedError)
    return { host: form.host, verdict: error.verdict, done: [] };
  if (error instanceof DeadLetterNotReplayedError) return error.results;
  return null;
}

/**
 * Runs a write action with the implementation the `lifeguard` command runs
 * (@lifeguard/operator-actions: `host confirm-fenced`, `host rehabilitate`, `dlq replay --id`) on the
 * console's connections, as `<operator> (console <instance>)`, confirmed since the request carried
 * the operator token. Never throws for a refusal (an OperatorError): it becomes `outcome: 'refused'`
 * with its reason and hints.
 * @throws other errors (a broker or Nova unreachable)
 */
export async function runAction(
  connections: ConsoleConnections,
  action: OperatorActionName,
  form: ActionForm,
): Promise<ActionResult> {
  const who = `${form.operator} (console ${connections.source.instance})`;
  const base = { action, host: form.host ?? null, target: form.id ?? null };
  try {
    const ran =
      action === 'confirm-fenced'
        ? await confirmFencedAction(connections, form, who)
        : action === 'rehabilitate'
          ? await rehabilitateAction(connections, form, who)
          : await replayAction(connections, form, who);
    return { ...base, outcome: 'done', hints: [], ...ran };
  } catch (error) {
    if (!(error instanceof OperatorError)) throw error;
    return {
      ...base,
      outcome: 'refused',
      detail: error.message,
      hints: refusalHints(error),
      incidentId: null,
      answer: refusalAnswer(error, form),
    };
  }
}

/**
 * What the page lists under a refusal: its hints; for a host that still reports, its evidence (one item
 * each), the explanation as one item (not the lines a terminal wraps), and where the console's
 * override is.
 */
function refusalHints(error: OperatorError): ReadonlyArray<string> {
  if (!(error instanceof HostIsReportingError)) return error.hints;
  return [
    ...error.evidence,
    error.hints.slice(error.evidence.length).join(' '),
    `On this console: tick "override (--host-is-reporting-override)" in the confirm form of ${error.host}'s incident and send it again; it is recorded with your name and the evidence above.`,
  ];
}

function requireField(value: string | undefined, name: string): string {
  if (!value) throw new OperatorError(`the form has no ${name}`);
  return value;
}
