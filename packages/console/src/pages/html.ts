import { html as preactHtml } from 'htm/preact';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

/**
 * Tagged templates for server-rendered pages (htm bound to preact): every interpolated value is text
 * and is escaped by preact's renderer, so a host name or reason holding `<script>` shows as text.
 */
export const html = preactHtml as (strings: TemplateStringsArray, ...values: unknown[]) => VNode;

/** Renders a whole page to an HTML document string. */
export function renderDocument(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}

/** Renders a fragment (the `<main>` element a live update swaps in). */
export function renderFragment(fragment: VNode): string {
  return render(fragment);
}
