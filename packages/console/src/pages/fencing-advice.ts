import { type FencingFacts, type FencingState, fencingAdviceOf } from '@lifeguard/operator-views';
import type { VNode } from 'preact';
import { html } from './html.ts';

/**
 * While an incident is `failed` or `fencing` without a fence proof, the advice `lifeguard incident`
 * and `lifeguard hosts` print (fencingAdviceOf, from the fence job and the host's own reports in
 * `facts`): wait for the retry or takeover, `rehabilitate` a host that reports again, or
 * `confirm-fenced` once fencing has failed for good, with what to check first. The command line is
 * shown as code. Null when the incident needs none.
 * @param confirmForm where this console offers the confirm form: `below` (the incident page),
 *   `incident` (a link to the incident page), or null (a read-only console offers none)
 */
export function fencingAdviceView(
  incident: FencingState,
  confirmForm: 'below' | 'incident' | null,
  facts: FencingFacts = {},
): VNode | null {
  const advice = fencingAdviceOf(incident, facts);
  if (advice === null) return null;
  const { kind, lines } = advice;
  return html`<section class="card advice" data-advice=${kind} data-host=${incident.host}>
    <h2>Next step: ${incident.host}</h2>
    ${lines.map((line) =>
      line.startsWith('  ') ? html`<pre><code>${line.trim()}</code></pre>` : html`<p>${line}</p>`,
    )}
    ${
      kind !== 'confirm-fenced'
        ? null
        : confirmForm === 'below'
          ? html`<p class="muted">On this console: the confirm form below.</p>`
          : confirmForm === 'incident'
            ? html`<p class="muted">On this console: the confirm form of incident <a href=${`/incidents/${encodeURIComponent(incident.id)}`}>${incident.id}</a>.</p>`
            : null
    }
  </section>`;
}
