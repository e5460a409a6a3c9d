import { z } from 'zod';

/**
 * Nova API resources as lifeguard reads them, validated at the boundary. Field names are Nova's
 * (api-ref, microversion 2.53+ unless noted); unknown fields are kept (`looseObject`) so newer
 * microversions do not break parsing. Source: docs/nova-facts.md.
 */

/** A compute service (`GET /os-services`, 2.53+: `id` is a UUID). */
export const ComputeService = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  binary: z.string(),
  host: z.string(),
  zone: z.string().nullable().optional(),
  /** `enabled` | `disabled`; 2.69 partial records from a down cell say `UNKNOWN`. */
  status: z.string(),
  /** `up` | `down`; missing in 2.69 partial records. */
  state: z.string().optional(),
  updated_at: z.string().nullable().optional(),
  disabled_reason: z.string().nullable().optional(),
  forced_down: z.boolean().optional(),
});
export type ComputeService = z.output<typeof ComputeService>;

/**
 * A compute service record as Nova sends it at 2.53+: ComputeService with its `id` already text.
 * Nothing in it transforms or defaults a value, so its output is its input: a record it accepts can
 * be used as it came, without the copy a zod parse builds (a new record and a result per field; at
 * 10,000 services that copy allocated more than the listing itself, every POLL seconds). Compiled
 * ahead of time by zod (`z.compile`), so `z.validate` runs the schema's own checks without building
 * anything (docs/node-monitor.md#the-cost-of-a-poll). `strict`: a zod that cannot compile it fails
 * at import rather than quietly checking slower.
 */
export const ListedComputeService = z.compile(ComputeService.extend({ id: z.string() }), { strict: true });

/** The envelope of an `os-services` listing: an object whose `services` is an array. */
const ServiceListing = z.compile(z.object({ services: z.array(z.unknown()) }), { strict: true });

/**
 * The services of a listing whose every record fits ListedComputeService, as they came (the same
 * array and records); null when one does not (then each record is parsed on its own, to convert a
 * number `id` or leave out a record that cannot be used). Keys lifeguard does not know are kept, as
 * ComputeService keeps them; one named `__proto__` is an own property of its record, as `JSON.parse`
 * makes it, and changes no prototype. Each record is checked by its own call, which V8 optimises
 * within the first listing and keeps optimised (one call over the whole listing ran its loop in
 * on-stack-replaced code that V8 let go between polls, and allocated again until it came back).
 */
export function servicesAsListed(body: unknown): ComputeService[] | null {
  if (!z.validate(ServiceListing, body)) return null;
  const { services } = body;
  for (const record of services) if (!z.validate(ListedComputeService, record)) return null;
  return services as ComputeService[];
}

/** Body of `PUT /os-services/{service_id}` (2.53+). `disabled_reason` only with `status: disabled`. */
export const ComputeServiceUpdate = z
  .object({
    status: z.enum(['enabled', 'disabled']).optional(),
    disabled_reason: z.string().min(1).max(255).optional(),
    forced_down: z.boolean().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'the body must change something')
  .refine((body) => body.disabled_reason === undefined || body.status === 'disabled', {
    message: 'disabled_reason may only be sent with status "disabled"',
    path: ['disabled_reason'],
  });
export type ComputeServiceUpdate = z.infer<typeof ComputeServiceUpdate>;

/** The flavor embedded in a server body (2.47+): no id, but `extra_specs` for admins. */
export const EmbeddedFlavor = z.looseObject({
  original_name: z.string().optional(),
  vcpus: z.number().optional(),
  ram: z.number().optional(),
  disk: z.number().optional(),
  extra_specs: z.record(z.string(), z.string()).optional(),
});

/** A server from `GET /servers/detail` or `GET /servers/{id}` (admin view). */
export const Server = z.looseObject({
  id: z.string(),
  name: z.string(),
  /** ACTIVE, SHUTOFF, ERROR, REBUILD, PAUSED, ... */
  status: z.string(),
  tenant_id: z.string().optional(),
  user_id: z.string().optional(),
  metadata: z.record(z.string(), z.string()).default({}),
  /**
   * The server's last fault, shown by Nova while its status is ERROR (or DELETED): `message` is what
   * went wrong (`No valid host was found. ...`), `details` a trace for admins.
   */
  fault: z
    .looseObject({
      code: z.number().optional(),
      message: z.string().optional(),
      details: z.string().optional(),
      created: z.string().optional(),
    })
    .optional(),
  /** Nova's server tags (microversion 2.26+). */
  tags: z.array(z.string()).optional(),
  /** `{id, links}`, or the empty string for a server booted from a volume. */
  image: z.union([z.looseObject({ id: z.string() }), z.literal('')]).optional(),
  flavor: EmbeddedFlavor.optional(),
  locked: z.boolean().optional(),
  locked_reason: z.string().nullable().optional(),
  host_status: z.string().nullable().optional(),
  'OS-EXT-SRV-ATTR:host': z.string().nullable().optional(),
  'OS-EXT-SRV-ATTR:hypervisor_hostname': z.string().nullable().optional(),
  'OS-EXT-STS:vm_state': z.string().nullable().optional(),
  'OS-EXT-STS:task_state': z.string().nullable().optional(),
  'OS-EXT-STS:power_state': z.number().nullable().optional(),
  'OS-EXT-AZ:availability_zone': z.string().nullable().optional(),
});
export type Server = z.output<typeof Server>;

/** A migration record (`GET /os-migrations`, 2.59+ adds `uuid`, paging and `changes-since`). */
export const Migration = z.looseObject({
  id: z.number(),
  uuid: z.string().optional(),
  instance_uuid: z.string(),
  source_compute: z.string().nullable().optional(),
  dest_compute: z.string().nullable().optional(),
  dest_host: z.string().nullable().optional(),
  /** Evacuations: accepted, pre-migrating, done, completed, error, failed. */
  status: z.string(),
  migration_type: z.string().optional(),
  created_at: z.string(),
  updated_at: z.string().nullable().optional(),
});
export type Migration = z.output<typeof Migration>;

/** A host aggregate (`GET /os-aggregates`); metadata values are strings. */
export const Aggregate = z.looseObject({
  id: z.number(),
  uuid: z.string().optional(),
  name: z.string(),
  availability_zone: z.string().nullable().optional(),
  hosts: z.array(z.string()).default([]),
  metadata: z.record(z.string(), z.string()).default({}),
});
export type Aggregate = z.output<typeof Aggregate>;

/** A flavor (`GET /flavors/detail`); `extra_specs` present from 2.61 when policy allows. */
export const Flavor = z.looseObject({
  id: z.string(),
  name: z.string(),
  vcpus: z.number().optional(),
  ram: z.number().optional(),
  disk: z.number().optional(),
  'os-flavor-access:is_public': z.boolean().optional(),
  extra_specs: z.record(z.string(), z.string()).optional(),
});
export type Flavor = z.output<typeof Flavor>;

/** A hypervisor (`GET /os-hypervisors/detail`, 2.53+: `id` is a UUID). */
export const Hypervisor = z.looseObject({
  id: z.union([z.string(), z.number()]).transform(String),
  hypervisor_hostname: z.string(),
  state: z.string().optional(),
  status: z.string().optional(),
  host_ip: z.string().nullable().optional(),
  service: z.looseObject({ id: z.union([z.string(), z.number()]).optional(), host: z.string() }).optional(),
});
export type Hypervisor = z.output<typeof Hypervisor>;

/** One event of `POST /os-server-external-events` (api-ref: no other keys allowed). */
export const ServerExternalEvent = z.object({
  name: z.enum([
    'network-changed',
    'network-vif-plugged',
    'network-vif-unplugged',
    'network-vif-deleted',
    'volume-extended',
    'power-update',
    'accelerator-request-bound',
    'volume-reimaged',
  ]),
  server_uuid: z.string(),
  status: z.enum(['failed', 'completed', 'in-progress']).optional(),
  tag: z.string().max(255).optional(),
});
export type ServerExternalEvent = z.infer<typeof ServerExternalEvent>;

/** Nova's answer per event: the event echoed with its own HTTP-like `code` (200, 404, 422, 400). */
export const ServerExternalEventResult = ServerExternalEvent.extend({ code: z.number() }).loose();
export type ServerExternalEventResult = z.infer<typeof ServerExternalEventResult>;
