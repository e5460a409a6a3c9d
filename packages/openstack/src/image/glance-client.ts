import { z } from 'zod';
import type { AuthProvider } from '../auth/auth-provider.ts';
import {
  type OpenStackTransport,
  type ServiceTransportOptions,
  serviceTransport,
} from '../http/openstack-transport.ts';
import { parseBody, queryOf } from '../http/parse-body.ts';
import type { ImageApi } from './image-api.ts';
import { Image } from './resources.ts';

/** GlanceClient's options: the transport's (auth, timeout in milliseconds, retry policy, logger) and its own. */
export interface GlanceClientOptions extends ServiceTransportOptions {
  /** Page size (`limit`); Glance's default is 25 (`limit_param_default`), its maximum 1000 (`api_limit_max`). */
  pageSize?: number;
}

const ImagesBody = z.object({ images: z.array(Image), next: z.string().optional() });

/**
 * The Image API client (Glance v2); implements ImageApi. The endpoint is the catalog's `image` URL
 * (`http://glance:9292`, `/v2` is appended unless present). Lists follow `next` through every page
 * (the marker is re-sent to the configured endpoint). Errors: GlanceApiError (status, Glance's message
 * — often an HTML page's text —, request id), EndpointUnreachableError, KeystoneAuthError,
 * UnexpectedResponseError.
 */
export class GlanceClient implements ImageApi {
  private readonly transport: OpenStackTransport;
  private readonly auth: AuthProvider;
  private readonly pageSize: number | undefined;

  constructor(options: GlanceClientOptions) {
    this.auth = options.auth;
    this.pageSize = options.pageSize;
    this.transport = serviceTransport('image', options);
  }

  private async imagesUrl(): Promise<URL> {
    const endpoint = (await this.auth.endpoint('image')).replace(/\/+$/, '');
    return new URL(/\/v2$/.test(endpoint) ? `${endpoint}/images` : `${endpoint}/v2/images`);
  }

  async listImages(filter: { tag?: string; limit?: number } = {}): Promise<Image[]> {
    const images: Image[] = [];
    const seenMarkers = new Set<string>();
    let marker: string | null = null;
    for (;;) {
      const url = await this.imagesUrl();
      if (filter.tag) url.searchParams.set('tag', filter.tag);
      const limit = filter.limit ?? this.pageSize;
      if (limit !== undefined) url.searchParams.set('limit', String(limit));
      if (marker) url.searchParams.set('marker', marker);
      const response = await this.transport.request({
        method: 'GET',
        url: url.toString(),
        operation: 'GET /v2/images',
      });
      const body = parseBody(ImagesBody, response, 'image', 'GET /v2/images');
      images.push(...body.images);
      const next = body.next ? queryOf(body.next).get('marker') : null;
      if (!next || body.images.length === 0 || seenMarkers.has(next)) return images;
      seenMarkers.add(next);
      marker = next;
    }
  }
}
