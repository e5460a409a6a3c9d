import type { VNode } from 'preact';
import { html } from './html.ts';

/** The write actions the console offers, each the implementation the `lifeguard` command runs. */
export type ConsoleAction = 'confirm-fenced' | 'rehabilitate' | 'replay';

/**
 * The confirm form's own field for `--host-is-reporting-override`: unticked, a host that still reports
 * is refused; ticked, the confirmation is recorded with the evidence it overrode.
 */
export const REPORTING_OVERRIDE_FIELD = 'host-is-reporting-override';

const REPORTING_OVERRIDE_LABEL =
  ' override (--host-is-reporting-override): record it although the host still reports to Nova or sends heartbeats — only if you are certain it is off or isolated and only its reports mislead; recorded with your name';

/**
 * A form posting one write action to `/actions/<action>`, with the operator's name and the operator
 * token (a password field: never shown, never stored in the page). `hidden` are the action's fixed
 * fields (host, dead-letter id); `reportingOverride` adds the override checkbox of `confirm-fenced`.
 * Shown only when the console has an operator token.
 */
export function actionForm(
  action: ConsoleAction,
  label: string,
  hidden: Readonly<Record<string, string>>,
  options: { writable: boolean; warning?: string; note?: boolean; reportingOverride?: boolean },
): VNode | null {
  if (!options.writable) return null;
  return html`<form method="post" action=${`/actions/${action}`} class="action" data-action=${action}>
    ${Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name=${name} value=${value} />`)}
    ${options.warning ? html`<p class="warning">${options.warning}</p>` : null}
    <label>your name <input name="operator" required maxlength="64" autocomplete="username" /></label>
    ${options.note ? html`<label>note <input name="note" maxlength="500" /></label>` : null}
    ${
      options.reportingOverride
        ? html`<label class="override"><input type="checkbox" name=${REPORTING_OVERRIDE_FIELD} value="yes" />${REPORTING_OVERRIDE_LABEL}</label>`
        : null
    }
    <label>operator token <input name="token" type="password" required autocomplete="off" /></label>
    <button type="submit">${label}</button>
  </form>`;
}
