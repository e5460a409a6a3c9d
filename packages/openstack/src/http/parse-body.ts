import type { z } from 'zod';
import { type OpenStackService, UnexpectedResponseError } from '../errors.ts';
import type { TransportResponse } from './openstack-transport.ts';

/**
 * Validates an answer's body with a zod schema (every answer crosses a process boundary).
 * @throws UnexpectedResponseError naming the first offending field, e.g. `services.0.host: expected string`
 */
export function parseBody<Schema extends z.ZodType>(
  schema: Schema,
  response: TransportResponse,
  service: OpenStackService,
  operation: string,
): z.output<Schema> {
  const result = schema.safeParse(response.body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.map(String).join('.')}: ` : '';
  throw new UnexpectedResponseError(
    service,
    operation,
    response.status,
    `${where}${issue?.message ?? 'invalid'}`,
    response.requestId,
  );
}

/**
 * The query of a `next` link (`servers_links`, `migrations_links`, `hypervisors_links`,
 * `flavors_links`, Glance's `next`), as parameters. The client re-issues the request against its own
 * endpoint with these parameters instead of following the link's host, which a proxy in front of
 * the API may have got wrong.
 */
export function nextLinkParameters(
  links: ReadonlyArray<{ rel?: string; href?: string }> | undefined,
): URLSearchParams | null {
  const next = links?.find((link) => link.rel === 'next')?.href;
  return next ? queryOf(next) : null;
}

/** The query parameters of an absolute or relative URL. */
export function queryOf(href: string): URLSearchParams {
  return new URL(href, 'http://relative.invalid').searchParams;
}
