import { z } from 'zod';

/**
 * A Glance v2 image. Custom properties (`openstack image set --property evacuable=true`) are top-level
 * string fields, so the schema keeps unknown keys. Source: docs/nova-facts.md#glance-images.
 */
export const Image = z.looseObject({
  id: z.string(),
  name: z.string().nullable().optional(),
  status: z.string().optional(),
  tags: z.array(z.string()).default([]),
  visibility: z.string().optional(),
});
export type Image = z.output<typeof Image>;
