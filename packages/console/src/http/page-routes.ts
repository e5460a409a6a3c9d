import { INSTANCE_HA_KEYS } from '@lifeguard/instance-ha';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import type { ConsoleState } from '../console-state.ts';
import { fleetPage } from '../pages/fleet-page.ts';
import { renderDocument, renderFragment } from '../pages/html.ts';
import { incidentPage, incidentsPage } from '../pages/incidents-page.ts';
import { layout } from '../pages/layout.ts';
import { provisioningPage } from '../pages/provisioning-page.ts';
import { queuesPage } from '../pages/queues-page.ts';
import { readFleet } from '../readers/fleet.ts';
import { readIncident, readIncidents } from '../readers/incidents.ts';
import { readProvisioning } from '../readers/provisioning.ts';
import { readQueues } from '../readers/queues.ts';

/** The request header the live script sends to get only the page's `main` element back. */
export const FRAGMENT_HEADER = 'x-lifeguard-fragment';

const IncidentParameters = z.object({ id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/) });

/**
 * Sends a page: the whole document, or only `main` when the live script asks (FRAGMENT_HEADER).
 * Pages are never cached: each shows the world as it is now.
 */
export function sendPage(
  state: ConsoleState,
  request: FastifyRequest,
  reply: FastifyReply,
  page: { title: string; path: string; main: VNode; status?: number },
): FastifyReply {
  const fragment = request.headers[FRAGMENT_HEADER] === 'main';
  const body = fragment
    ? renderFragment(page.main)
    : renderDocument(
        layout(
          {
            title: page.title,
            path: page.path,
            writable: state.writable,
            refreshSeconds: state.config.LIFEGUARD_CONSOLE_REFRESH_SECONDS,
          },
          page.main,
        ),
      );
  return reply
    .code(page.status ?? 200)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(body);
}

/** The four pages and one incident's page. */
export function registerPageRoutes(app: FastifyInstance, state: ConsoleState): void {
  app.get('/', async (request, reply) => {
    const view = await readFleet(state.connections, state.instanceHa());
    return sendPage(state, request, reply, {
      title: 'Fleet',
      path: '/',
      main: fleetPage(view, state.writable),
    });
  });
  app.get('/incidents', async (request, reply) => {
    const incidents = await readIncidents(state.connections);
    return sendPage(state, request, reply, {
      title: 'Incidents',
      path: '/incidents',
      main: incidentsPage(incidents),
    });
  });
  app.get('/incidents/:id', async (request, reply) => {
    const parameters = IncidentParameters.safeParse(request.params);
    if (!parameters.success) {
      return reply
        .code(400)
        .type('text/plain; charset=utf-8')
        .send('not an incident id: letters, digits, ".", "_", ":" and "-"');
    }
    const id = parameters.data.id;
    const instanceHa = state.instanceHa();
    const seen = await readIncident(
      state.connections,
      id,
      instanceHa.ok ? instanceHa.value.deltaSeconds : INSTANCE_HA_KEYS.DELTA.default,
    );
    return sendPage(state, request, reply, {
      title: `Incident ${id}`,
      path: '/incidents',
      main: incidentPage(seen, id, state.writable),
      status: seen.ok && seen.value === null ? 404 : 200,
    });
  });
  app.get('/queues', async (request, reply) => {
    const pageLoad = request.headers[FRAGMENT_HEADER] !== 'main';
    const view = await readQueues(state.connections, state.deadLetters, pageLoad);
    return sendPage(state, request, reply, {
      title: 'Queues and workers',
      path: '/queues',
      main: queuesPage(view, state.writable),
    });
  });
  app.get('/provisioning', async (request, reply) => {
    const view = await readProvisioning(state.connections, state.env);
    return sendPage(state, request, reply, {
      title: 'Provisioning',
      path: '/provisioning',
      main: provisioningPage(view),
    });
  });
}
