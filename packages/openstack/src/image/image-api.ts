import type { Image } from './resources.ts';

/** The Image API (Glance v2) calls lifeguard makes. */
export interface ImageApi {
  /**
   * `GET /v2/images` following `next` links through every page (optionally `?tag=`). `limit` is the
   * page size (Glance's default 25 when absent).
   */
  listImages(filter?: { tag?: string; limit?: number }): Promise<Image[]>;
}
