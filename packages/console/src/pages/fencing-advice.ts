import { type FencingState, fencingAdvice } from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import { html } from './html.ts';

/**
 * While fencing keeps failing (an incident `failed` or `fencing` without a fence proof), the advice
 * `lifeguard incident` and `lifeguard hosts` print (fencingAdvice): that `confirm-fenced` is the way forward, and what the
 * operator must check first. The command line is shown as code. Null when the incident needs none.
 * @param confirmForm where this console offers the confirm form: `below` (the incident page),
 *   `incident` (a link to the incident page), or null (a read-only console offers none)
 */
export function fencingAdviceView(
  incident: FencingState,
  confirmForm: 'below' | 'incident' | null,
): VNode | null {
  const lines = fencingAdvice(incident);
  if (lines.length === 0) return null;
  return html`<section class="card advice" data-advice="confirm-fenced" data-host=${incident.host}>
    <h2>Next step: ${incident.host}</h2>
    ${lines.map((line) =>
      line.startsWith('  ') ? html`<pre><code>${line.trim()}</code></pre>` : html`<p>${line}</p>`,
    )}
    ${
      confirmForm === 'below'
        ? html`<p class="muted">On this console: the confirm form below.</p>`
        : confirmForm === 'incident'
          ? html`<p class="muted">On this console: the confirm form of incident <a href=${`/incidents/${encodeURIComponent(incident.id)}`}>${incident.id}</a>.</p>`
          : null
    }
  </section>`;
}
