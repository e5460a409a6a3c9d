import { ServerExternalEvent, ServerExternalEventResult } from '@lifeguard/openstack';
import { z } from 'zod';
import { NovaHttpError } from '../errors.ts';
import type { ExternalEventsApi } from './nova-notifier.ts';

const Answer = z.object({ events: z.array(ServerExternalEventResult) });

/**
 * `POST <compute endpoint>/os-server-external-events` against a fixed Compute endpoint URL, with an
 * optional static token, at microversion 2.1 as Neutron sends it. Used when no clouds.yaml cloud is
 * configured; resolves for 200 and 207 (per-event codes), throws NovaHttpError otherwise.
 */
export class NovaExternalEventsClient implements ExternalEventsApi {
  constructor(
    private readonly options: {
      /** The Compute endpoint, e.g. `http://nova:8774/v2.1`. */
      endpoint: string;
      /** Sent as X-Auth-Token when given; never logged. */
      token?: string | undefined;
      /** Per-request timeout in milliseconds (default 10000). */
      timeoutMilliseconds?: number;
    },
  ) {}

  async createServerExternalEvents(
    events: ReadonlyArray<ServerExternalEvent>,
  ): Promise<{ status: number; events: ServerExternalEventResult[] }> {
    const body = JSON.stringify({ events: events.map((event) => ServerExternalEvent.parse(event)) });
    let response: Response;
    try {
      response = await fetch(`${this.options.endpoint.replace(/\/+$/, '')}/os-server-external-events`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'openstack-api-version': 'compute 2.1',
          'x-openstack-nova-api-version': '2.1',
          ...(this.options.token ? { 'x-auth-token': this.options.token } : {}),
        },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMilliseconds ?? 10_000),
      });
    } catch (error) {
      throw new NovaHttpError(0, `Nova is not reachable: ${(error as Error).message}`, { cause: error });
    }
    const text = await response.text();
    if (response.status !== 200 && response.status !== 207) {
      throw new NovaHttpError(
        response.status,
        `Nova answered HTTP ${response.status}: ${text.slice(0, 300)}`,
      );
    }
    return { status: response.status, events: Answer.parse(JSON.parse(text)).events };
  }
}
