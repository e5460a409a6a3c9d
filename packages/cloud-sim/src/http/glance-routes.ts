import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CloudModel } from '../model/cloud-model.ts';
import type { SimImage } from '../model/records.ts';
import { authenticate } from './nova-plumbing.ts';
import type { SimContext } from './sim-context.ts';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Request Entity Too Large',
};
const RESERVED = new Set([
  'id',
  'name',
  'status',
  'visibility',
  'tags',
  'disk_format',
  'container_format',
  'created_at',
  'updated_at',
  'self',
  'file',
  'schema',
  'size',
  'virtual_size',
  'checksum',
  'owner',
  'protected',
  'min_ram',
  'min_disk',
  'os_hidden',
  'os_hash_algo',
  'os_hash_value',
  'stores',
  'locations',
  'direct_url',
]);

/** Glance's error page (webob): `<html>...<h1>404 Not Found</h1>\n  <message><br /><br />...`. */
export function sendGlanceError(reply: FastifyReply, status: number, message: string): FastifyReply {
  const title = `${status} ${STATUS_TEXT[status] ?? 'Error'}`;
  return reply
    .code(status)
    .type('text/html; charset=UTF-8')
    .send(
      `<html>\n <head>\n  <title>${title}</title>\n </head>\n <body>\n  <h1>${title}</h1>\n  ${message}<br /><br />\n\n\n\n </body>\n</html>`,
    );
}

function isoZ(milliseconds: number): string {
  return `${new Date(milliseconds).toISOString().slice(0, 19)}Z`;
}

/** An image as Glance v2 shows it; custom properties are top-level string fields. */
export function imageView(image: SimImage): Record<string, unknown> {
  return {
    name: image.name,
    disk_format: image.diskFormat,
    container_format: image.containerFormat,
    visibility: image.visibility,
    size: image.status === 'active' ? 1024 : null,
    virtual_size: image.status === 'active' ? 1024 : null,
    status: image.status,
    checksum: null,
    protected: false,
    min_ram: 0,
    min_disk: 0,
    owner: null,
    os_hidden: false,
    os_hash_algo: null,
    os_hash_value: null,
    ...image.properties,
    id: image.id,
    created_at: isoZ(image.createdAt),
    updated_at: isoZ(image.updatedAt),
    tags: [...image.tags],
    self: `/v2/images/${image.id}`,
    file: `/v2/images/${image.id}/file`,
    schema: '/v2/schemas/image',
  };
}

/** Glance v2 image API subset under `/image`: versions, list (paging, tags), show, create, delete, tags, JSON-patch. */
export function registerGlanceRoutes(app: FastifyInstance, context: SimContext): void {
  const { model } = context;
  app.addHook('onRequest', async (request, reply) => {
    if (request.url === '/image' || request.url === '/image/') return undefined;
    if (!authenticate(request, reply, context, 'image')) return reply;
    return undefined;
  });
  app.get('/', async (request) => ({
    versions: ['2.15', '2.14', '2.13', '2.12'].map((version, index) => ({
      id: `v${version}`,
      status: index === 0 ? 'CURRENT' : 'SUPPORTED',
      links: [{ rel: 'self', href: `${request.protocol}://${request.host}/image/v2/` }],
    })),
  }));

  const find = (reply: FastifyReply, id: string): SimImage | null => findImage(model, reply, id);

  app.get('/v2/images', listImages(model));

  app.get('/v2/images/:id', async (request, reply) => {
    const image = find(reply, (request.params as { id: string }).id);
    return image ? imageView(image) : reply;
  });

  app.post('/v2/images', createImage(model));

  app.delete('/v2/images/:id', async (request, reply) => {
    const image = find(reply, (request.params as { id: string }).id);
    if (!image) return reply;
    model.images.delete(image.id);
    return reply.code(204).send();
  });

  app.put('/v2/images/:id/tags/:tag', async (request, reply) => {
    const { id, tag } = request.params as { id: string; tag: string };
    const image = find(reply, id);
    if (!image) return reply;
    if (!image.tags.includes(tag)) image.tags.push(tag);
    image.updatedAt = model.now();
    return reply.code(204).send();
  });

  app.delete('/v2/images/:id/tags/:tag', async (request, reply) => {
    const { id, tag } = request.params as { id: string; tag: string };
    const image = find(reply, id);
    if (!image) return reply;
    if (!image.tags.includes(tag)) return sendGlanceError(reply, 404, `Tag ${tag} not found`);
    image.tags.splice(image.tags.indexOf(tag), 1);
    return reply.code(204).send();
  });

  app.patch('/v2/images/:id', patchImage(model));
}

/**
 * `GET /v2/images`: newest first, filtered by every `tag`, paged by `limit` (default 25, at most 1000) and
 * `marker`, with `first` and `next` links.
 */
function listImages(model: CloudModel) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as Record<string, string | string[] | undefined>;
    const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
    let limit = 25;
    const limitText = single(query.limit);
    if (limitText !== undefined) {
      if (!/^-?\d+$/.test(limitText)) return sendGlanceError(reply, 400, 'limit param must be an integer');
      limit = Number(limitText);
      if (limit < 0) return sendGlanceError(reply, 400, 'limit param must be positive');
      limit = Math.min(limit, 1000);
    }
    const tags = query.tag === undefined ? [] : Array.isArray(query.tag) ? query.tag : [query.tag];
    let images = [...model.images.values()]
      .filter((image) => tags.every((tag) => image.tags.includes(tag)))
      .sort((left, right) => right.createdAt - left.createdAt || right.order - left.order);
    const marker = single(query.marker);
    if (marker !== undefined) {
      const index = images.findIndex((image) => image.id === marker);
      if (index < 0)
        return sendGlanceError(reply, 400, `Invalid marker. Image ${marker} could not be found.`);
      images = images.slice(index + 1);
    }
    const page = images.slice(0, limit);
    const parameters = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (key === 'marker' || value === undefined) continue;
      for (const each of Array.isArray(value) ? value : [value]) parameters.append(key, each);
    }
    const first = `/v2/images${parameters.size ? `?${parameters.toString()}` : ''}`;
    const body: Record<string, unknown> = {
      images: page.map(imageView),
      first,
      schema: '/v2/schemas/images',
    };
    if (page.length > 0 && page.length === limit) {
      parameters.set('marker', page.at(-1)!.id);
      body.next = `/v2/images?${parameters.toString()}`;
    }
    return body;
  };
}

/** `POST /v2/images`: a `queued` image; keys that are not reserved attributes become properties. */
function createImage(model: CloudModel) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const properties: Record<string, string> = {};
    for (const [key, value] of Object.entries(body)) {
      if (!RESERVED.has(key)) properties[key] = String(value);
    }
    if (body.tags !== undefined && !Array.isArray(body.tags))
      return sendGlanceError(reply, 400, 'Invalid value for tags');
    const image = model.addImage({
      name: typeof body.name === 'string' ? body.name : null,
      status: 'queued',
      tags: Array.isArray(body.tags) ? body.tags.map(String) : [],
      visibility: typeof body.visibility === 'string' ? body.visibility : 'shared',
      diskFormat: typeof body.disk_format === 'string' ? body.disk_format : null,
      containerFormat: typeof body.container_format === 'string' ? body.container_format : null,
      properties,
      ...(typeof body.id === 'string' ? { id: body.id } : {}),
    });
    return reply.code(201).send(imageView(image));
  };
}

/** `PATCH /v2/images/{id}`: JSON-patch of `name`, `tags` and properties; reserved attributes are read-only (403). */
function patchImage(model: CloudModel) {
  const find = (reply: FastifyReply, id: string): SimImage | null => findImage(model, reply, id);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const image = find(reply, (request.params as { id: string }).id);
    if (!image) return reply;
    const operations = request.body as Array<{ op: string; path: string; value?: unknown }>;
    if (!Array.isArray(operations))
      return sendGlanceError(reply, 400, 'Request body must be a JSON array of operation objects.');
    for (const operation of operations) {
      const key = operation.path.replace(/^\//, '');
      if (key === 'name') image.name = operation.op === 'remove' ? null : String(operation.value);
      else if (key === 'tags') image.tags = Array.isArray(operation.value) ? operation.value.map(String) : [];
      else if (RESERVED.has(key)) return sendGlanceError(reply, 403, `Attribute '${key}' is read-only.`);
      else if (operation.op === 'remove') delete image.properties[key];
      else image.properties[key] = String(operation.value);
    }
    image.updatedAt = model.now();
    return imageView(image);
  };
}

/** The image of that id, or null after answering 404. */
function findImage(model: CloudModel, reply: FastifyReply, id: string): SimImage | null {
  const image = model.images.get(id);
  if (!image) sendGlanceError(reply, 404, `No image found with ID ${id}`);
  return image ?? null;
}
