import { Writable } from 'node:stream';
import {
  CliContext,
  CliError,
  confirmFenced,
  HostIsReportingError,
  NOVA_SERVICE_DOWN_TIME_SECONDS,
  rehabilitate,
  replayDeadLetters,
} from '@lifeguard/cli';
import type { OperatorActionName } from '@lifeguard/contracts';
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

/** How a write action ended: `done` with what the CLI printed, or `refused` with its reason and hints. */
export interface ActionResult {
  readonly action: OperatorActionName;
  readonly outcome: 'done' | 'refused';
  readonly detail: string;
  readonly hints: ReadonlyArray<string>;
  readonly host: string | null;
  readonly incidentId: string | null;
  readonly target: string | null;
  /** The CLI's JSON answer, when it printed one. */
  readonly answer: unknown;
}

/** A captured output stream (the CLI writes its JSON answer and progress lines to it). */
class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

/** The CLI's JSON answer (with `--json` its standard output holds only that), or null. */
function lastJson(text: string): unknown {
  try {
    return text.trim() === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Runs a write action with the CLI's own implementation (`lifeguard host confirm-fenced`,
 * `lifeguard host rehabilitate`, `lifeguard dlq replay --id`), as `<operator> (console <instance>)`,
 * confirmed (`--yes`) since the request carried the operator token, with JSON output captured.
 * Never throws for a refusal (a CliError): it becomes `outcome: 'refused'` with the CLI's reason.
 * @throws other errors (a broker or Nova unreachable) as the CLI would report them
 */
export async function runAction(
  connections: ConsoleConnections,
  env: NodeJS.ProcessEnv,
  action: OperatorActionName,
  form: ActionForm,
): Promise<ActionResult> {
  const who = `${form.operator} (console ${connections.source.instance})`;
  const stdout = new Capture();
  const stderr = new Capture();
  const cli = new CliContext({
    stdout,
    stderr,
    stdin: process.stdin,
    env: { ...env, USER: who, SUDO_USER: '' },
  });
  const base = { action, host: form.host ?? null, target: form.id ?? null, hints: [] as string[] };
  try {
    if (action === 'confirm-fenced') {
      await confirmFenced(cli, requireField(form.host, 'host'), {
        operator: who,
        ...(form.note ? { note: form.note } : {}),
        ...(form['host-is-reporting-override'] === 'yes' ? { hostIsReportingOverride: true as const } : {}),
        yes: true,
        json: true,
      });
    } else if (action === 'rehabilitate') {
      await rehabilitate(cli, requireField(form.host, 'host'), {
        yes: true,
        json: true,
        waitSeconds: REHABILITATE_WAIT_SECONDS,
        serviceDownTime: NOVA_SERVICE_DOWN_TIME_SECONDS,
      });
    } else {
      const results = await replayDeadLetters(await cli.amqp(), {
        limit: 1,
        ids: [requireField(form.id, 'id')],
        replayedBy: who,
        dryRun: false,
      });
      cli.printJson(results);
      const result = results[0];
      if (result?.outcome !== 'replayed') {
        throw new CliError(
          `dead letter ${form.id} was not replayed: ${result?.outcome ?? 'not-found'} ${result?.detail ?? ''}`.trim(),
        );
      }
    }
    const answer = lastJson(stdout.text);
    return {
      ...base,
      outcome: 'done',
      detail: summary(action, answer),
      incidentId: incidentOf(answer),
      answer,
    };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return {
      ...base,
      outcome: 'refused',
      detail: error.message,
      hints: refusalHints(error),
      incidentId: null,
      answer: lastJson(stdout.text),
    };
  } finally {
    await cli.close();
  }
}

/**
 * What the page lists under a refusal: the CLI's hints; for a host that still reports, its evidence
 * (one item each), the CLI's explanation as one item, and where the console's override is.
 */
function refusalHints(error: CliError): ReadonlyArray<string> {
  if (!(error instanceof HostIsReportingError)) return error.hints;
  return [
    ...error.evidence,
    error.hints.slice(error.evidence.length).join(' '),
    `On this console: tick "override (--host-is-reporting-override)" in the confirm form of ${error.host}'s incident and send it again; it is recorded with your name and the evidence above.`,
  ];
}

function requireField(value: string | undefined, name: string): string {
  if (!value) throw new CliError(`the form has no ${name}`);
  return value;
}

function incidentOf(answer: unknown): string | null {
  const incident = (answer as { incident?: { id?: unknown } } | null)?.incident;
  return typeof incident?.id === 'string' ? incident.id : null;
}

function summary(action: OperatorActionName, answer: unknown): string {
  if (action === 'confirm-fenced') {
    const recorded = (answer as { recorded?: boolean } | null)?.recorded;
    return recorded ? 'operator-confirmed fence recorded' : 'the host was already fenced; nothing recorded';
  }
  if (action === 'rehabilitate') {
    const done = (answer as { done?: string[]; verdict?: { reason?: string } } | null) ?? {};
    return done.done && done.done.length > 0
      ? `done: ${done.done.join(', ')}`
      : (done.verdict?.reason ?? 'nothing to do');
  }
  return 'replayed';
}
