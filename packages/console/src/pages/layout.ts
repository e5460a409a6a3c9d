import type { VNode } from 'preact';
import type { Seen } from '../readers/seen.ts';
import { html } from './html.ts';

/** The console's pages, in the navigation's order. */
export const PAGES = [
  { path: '/', title: 'Fleet' },
  { path: '/incidents', title: 'Incidents' },
  { path: '/queues', title: 'Queues and workers' },
  { path: '/provisioning', title: 'Provisioning' },
] as const;

export interface LayoutOptions {
  readonly title: string;
  /** The navigation entry to highlight. */
  readonly path: string;
  /** True when write actions are possible (an operator token is configured). */
  readonly writable: boolean;
  /** Re-read interval without events, in seconds (the live script's fallback). */
  readonly refreshSeconds: number;
}

/**
 * A page: navigation, the live-update status, and `main` (the part the live script replaces when an
 * event arrives or the refresh interval passes).
 */
export function layout(options: LayoutOptions, main: VNode): VNode {
  return html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${options.title} · lifeguard</title>
      <link rel="icon" href="/static/favicon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/static/console.css" />
      <script src="/static/console.js" defer></script>
    </head>
    <body data-refresh-seconds=${String(options.refreshSeconds)}>
      <header>
        <strong class="brand">lifeguard</strong>
        <nav>
          ${PAGES.map(
            (page) =>
              html`<a href=${page.path} class=${page.path === options.path ? 'current' : ''}>${page.title}</a>`,
          )}
        </nav>
        <span class="mode">${options.writable ? 'write actions need the operator token' : 'read-only'}</span>
        <span id="live" class="live" data-state="connecting">connecting…</span>
      </header>
      ${main}
    </body>
  </html>`;
}

/** The `main` element of a page. */
export function mainSection(title: string, ...children: VNode[]): VNode {
  return html`<main id="main"><h1>${title}</h1>${children}</main>`;
}

/** A notice that a source could not be read, saying which and why. */
export function unseen(seen: Extract<Seen<unknown>, { ok: false }>, what: string): VNode {
  return html`<p class="unseen" data-unseen=${seen.source}>
    cannot see ${what}: ${seen.source} — ${seen.reason}
  </p>`;
}

/** Renders `seen`'s value with `view`, or the unseen notice. */
export function whenSeen<Value>(seen: Seen<Value>, what: string, view: (value: Value) => VNode): VNode {
  return seen.ok ? view(seen.value) : unseen(seen, what);
}

/** A table with a header row; `rows` are arrays of cells (strings, numbers or elements). */
export function table(
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
  id?: string,
): VNode {
  return html`<table id=${id}>
    <thead><tr>${headers.map((header) => html`<th>${header}</th>`)}</tr></thead>
    <tbody>
      ${rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell === null || cell === undefined ? '-' : cell}</td>`)}</tr>`)}
    </tbody>
  </table>`;
}

/** A small coloured label (`up`, `down`, `FAILED`, ...); `tone` picks the colour. */
export function badge(text: string, tone: 'ok' | 'bad' | 'warn' | 'info' | 'muted'): VNode {
  return html`<span class=${`badge ${tone}`}>${text}</span>`;
}
