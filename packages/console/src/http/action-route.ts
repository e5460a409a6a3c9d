import type { OperatorActionName } from '@lifeguard/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { checkOperatorToken, presentedToken, WriteRefusedError } from '../actions/operator-token.ts';
import { ActionForm, type ActionResult, runAction } from '../actions/run-action.ts';
import type { ConsoleState } from '../console-state.ts';
import { html } from '../pages/html.ts';
import { mainSection } from '../pages/layout.ts';
import { sendPage } from './page-routes.ts';

const ACTIONS: Readonly<Record<string, OperatorActionName>> = {
  'confirm-fenced': 'confirm-fenced',
  rehabilitate: 'rehabilitate',
  replay: 'replay-dead-letter',
};

const ActionParameters = z.object({ action: z.enum(['confirm-fenced', 'rehabilitate', 'replay']) });

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('application/json');
}

function answer(
  state: ConsoleState,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  body: { outcome: string; message: string; hints?: ReadonlyArray<string>; result?: ActionResult },
): FastifyReply {
  if (wantsJson(request)) return reply.code(status).send(body);
  const main = mainSection(
    body.outcome === 'done' ? 'Done' : 'Not done',
    html`<p id="action-result" data-outcome=${body.outcome} class=${body.outcome === 'done' ? 'result-ok' : 'unseen'}>${body.message}</p>`,
    html`<ul>${(body.hints ?? []).map((hint) => html`<li>${hint}</li>`)}</ul>`,
    html`<p><a href=${request.headers.referer && URL.canParse(request.headers.referer) ? new URL(request.headers.referer).pathname : '/'}>back</a></p>`,
  );
  return sendPage(state, request, reply, { title: 'Action', path: '', main, status });
}

/**
 * `POST /actions/confirm-fenced | rehabilitate | replay`: a write action, only with the operator token
 * (LIFEGUARD_CONSOLE_OPERATOR_TOKEN) in `Authorization: Bearer` or the form field `token`. Refused
 * before anything runs: 403 when the console is read-only, 401 without the right token, 400 for a bad
 * form. Otherwise the action runs as the `lifeguard` command runs it (@lifeguard/operator-actions), and
 * an `operator.action` event records who did what and how it ended (`done` 200, `refused` 409 with the
 * reason).
 */
export function registerActionRoute(app: FastifyInstance, state: ConsoleState): void {
  app.post('/actions/:action', async (request, reply) => {
    const parameters = ActionParameters.safeParse(request.params);
    if (!parameters.success)
      return answer(state, request, reply, 404, { outcome: 'unknown', message: 'no such action' });
    const action = ACTIONS[parameters.data.action]!;
    const body = (request.body ?? {}) as Record<string, unknown>;
    try {
      checkOperatorToken(
        state.config.LIFEGUARD_CONSOLE_OPERATOR_TOKEN,
        presentedToken(request.headers.authorization, body.token),
      );
    } catch (error) {
      if (!(error instanceof WriteRefusedError)) throw error;
      state.metrics.actions.inc({ action, outcome: 'unauthorised' });
      request.log.warn({ action, status: error.statusCode }, `write action refused: ${error.message}`);
      return answer(state, request, reply, error.statusCode, {
        outcome: 'unauthorised',
        message: error.message,
      });
    }
    const form = ActionForm.safeParse(body);
    if (!form.success) {
      const problem = form.error.issues
        .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
        .join('; ');
      return answer(state, request, reply, 400, {
        outcome: 'invalid',
        message: `the form is not valid: ${problem}; nothing was changed`,
      });
    }
    let result: ActionResult;
    try {
      result = await runAction(state.connections, action, form.data);
    } catch (error) {
      state.metrics.actions.inc({ action, outcome: 'failed' });
      const message = error instanceof Error ? error.message : String(error);
      request.log.error({ err: error, action }, 'write action failed');
      return answer(state, request, reply, 503, {
        outcome: 'failed',
        message: `${action} could not run: ${message}`,
      });
    }
    state.metrics.actions.inc({ action, outcome: result.outcome });
    if (action === 'replay-dead-letter') state.deadLetters.forget();
    await recordAction(state, form.data.operator, result, request);
    return answer(state, request, reply, result.outcome === 'done' ? 200 : 409, {
      outcome: result.outcome,
      message: `${action}${result.host ? ` ${result.host}` : ''}${result.target ? ` ${result.target}` : ''}: ${result.detail}`,
      hints: result.hints,
      result,
    });
  });
}

/** Publishes `operator.action` (who, what, how it ended); a failure to publish is logged, not hidden. */
async function recordAction(
  state: ConsoleState,
  operator: string,
  result: ActionResult,
  request: FastifyRequest,
) {
  try {
    await (await state.connections.events()).publish('operator.action', {
      action: result.action,
      operator,
      via: `lifeguard-console ${state.connections.source.instance}`,
      host: result.host,
      incidentId: result.incidentId,
      target: result.target,
      outcome: result.outcome,
      detail: result.detail.slice(0, 1000),
    });
  } catch (error) {
    request.log.error(
      { err: error, action: result.action, operator },
      'ALERT: could not publish operator.action',
    );
  }
  request.log.info(
    { action: result.action, operator, host: result.host, target: result.target, outcome: result.outcome },
    'write action',
  );
}
