import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NovaFault } from './nova-plumbing.ts';
import { lookupServer } from './nova-server-routes.ts';
import { changedMetadata, checkMetadataState, metadataBody } from './server-metadata-rules.ts';
import type { SimContext } from './sim-context.ts';

type Params = { id: string; key?: string };

/**
 * Nova's server metadata API (api-ref "Server metadata", server_metadata.py): the whole set
 * (`GET`, `POST` merges, `PUT` replaces, each answering 200 with the set) and one item by key (`GET`,
 * `PUT` with `{"meta": {key: value}}` answering 200 with that item, `DELETE` answering 204). The body
 * is checked first (400), then the server (404), the key (404, or 400 when the body names another),
 * the server's state (409) and the quota of 128 items (403), as Nova checks them.
 */
export function registerNovaMetadataRoutes(app: FastifyInstance, context: SimContext): void {
  const { model } = context;
  const params = (request: FastifyRequest) => request.params as Params;

  app.get('/servers/:id/metadata', async (request) => ({
    metadata: { ...lookupServer(model, params(request).id).metadata },
  }));

  const updateAll = (replace: boolean) => async (request: FastifyRequest) => {
    const items = metadataBody('metadata', request.body);
    const server = lookupServer(model, params(request).id);
    checkMetadataState(server, 'update metadata');
    server.metadata = changedMetadata(server.metadata, items, replace);
    model.touch(server);
    return { metadata: { ...server.metadata } };
  };
  app.post('/servers/:id/metadata', updateAll(false));
  app.put('/servers/:id/metadata', updateAll(true));

  app.get('/servers/:id/metadata/:key', async (request) => {
    const { id, key = '' } = params(request);
    const metadata = lookupServer(model, id).metadata;
    if (!Object.hasOwn(metadata, key)) throw new NovaFault(404, 'Metadata item was not found');
    return { meta: { [key]: metadata[key] } };
  });

  app.put('/servers/:id/metadata/:key', async (request) => {
    const item = metadataBody('meta', request.body);
    const { id, key = '' } = params(request);
    const server = lookupServer(model, id);
    if (!Object.hasOwn(item, key)) throw new NovaFault(400, 'Request body and URI mismatch');
    checkMetadataState(server, 'update metadata');
    server.metadata = changedMetadata(server.metadata, item, false);
    model.touch(server);
    return { meta: item };
  });

  app.delete('/servers/:id/metadata/:key', async (request, reply) => {
    const { id, key = '' } = params(request);
    const server = lookupServer(model, id);
    if (!Object.hasOwn(server.metadata, key)) throw new NovaFault(404, 'Metadata item was not found');
    checkMetadataState(server, 'delete metadata');
    const { [key]: _removed, ...rest } = server.metadata;
    server.metadata = rest;
    model.touch(server);
    return reply.code(204).send();
  });
}
