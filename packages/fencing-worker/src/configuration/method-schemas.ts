import { z } from 'zod';
import { bmcAddressProblem } from './bmc-address.ts';

/** What the schemas need to know besides the YAML itself. */
export interface MethodSchemaContext {
  allowLoopback: boolean;
}

/** Text, also from a YAML number (`ipport: 623` and `ipport: "623"` are the same). */
const text = z.union([z.string(), z.number()]).transform((value) => String(value).trim());

const BOOLEAN_WORDS: Record<string, boolean> = {
  true: true,
  '1': true,
  yes: true,
  on: true,
  enabled: true,
  false: false,
  '0': false,
  no: false,
  off: false,
  disabled: false,
};

/**
 * A boolean as InstanceHA writes them (a YAML bool or `"true"`, `"1"`, `"yes"`, `"on"`, `"enabled"`).
 * Unlike InstanceHA, an unknown word is an error rather than false: a typo in `tls` must not
 * silently send credentials over plain http.
 */
export const flag = z.union([z.boolean(), z.string(), z.number()]).transform((value, context) => {
  if (typeof value === 'boolean') return value;
  const word = BOOLEAN_WORDS[String(value).trim().toLowerCase()];
  if (word === undefined) {
    context.addIssue({ code: 'custom', message: 'must be true or false (true, 1, yes, on, enabled, ...)' });
    return z.NEVER;
  }
  return word;
});

/** `ipport`: an integer 1-65535. */
export const port = text.pipe(
  z
    .string()
    .regex(/^\d+$/, 'must be a port number')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be 1-65535').max(65535, 'must be 1-65535')),
);

/** `timeout` in seconds, clamped to 5-300 as InstanceHA's IPMI/Redfish code does. */
export const timeoutSeconds = text.pipe(
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number of seconds')
    .transform((value) => Math.min(300, Math.max(5, Number(value)))),
);

/** `login`: InstanceHA's rule `^[a-zA-Z0-9_-]{1,64}$`. */
export const login = text.pipe(
  z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "_" or "-"'),
);

/**
 * `passwd`: any non-empty text without line breaks (fence agents read one `key=value` per line).
 * Taken as written, not trimmed.
 */
export const password = z
  .union([z.string(), z.number()])
  .transform((value) => String(value))
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .refine((value) => !/[\r\n\0]/.test(value), 'must not contain line breaks or NUL'),
  );

/** `ipaddr`: an IP literal that passes the SSRF guard (see bmcAddressProblem). */
export function address(context: MethodSchemaContext) {
  return text.pipe(
    z.string().superRefine((value, refinement) => {
      const problem = bmcAddressProblem(value, context.allowLoopback);
      if (problem) refinement.addIssue({ code: 'custom', message: problem });
    }),
  );
}

/**
 * A GUID/UUID written any common way (`{...}`, with or without hyphens, any case), normalised to
 * 32 lower-case hex digits for comparison.
 */
export const identity = text.pipe(
  z
    .string()
    .transform((value) => value.replace(/[{}\s-]/g, '').toLowerCase())
    .pipe(z.string().regex(/^[0-9a-f]{32}$/, 'must be a GUID/UUID (32 hexadecimal digits)')),
);

/** Normalises a GUID/UUID read from a BMC the same way as `identity`. */
export function normaliseIdentity(value: string): string {
  return value.replace(/[{}\s-]/g, '').toLowerCase();
}

/** A file path (CA bundle, client certificate). */
const path = z.string().min(1);

export function ipmiSchema(context: MethodSchemaContext) {
  return z.strictObject({
    agent: z.string(),
    ipaddr: address(context),
    ipport: port,
    login,
    passwd: password.refine(
      (value) => Buffer.byteLength(value) <= 20,
      'must be at most 20 bytes (the IPMI v2 limit; ipmitool refuses longer ones)',
    ),
    timeout: timeoutSeconds.optional(),
    cipher: text
      .pipe(z.string().regex(/^\d+$/, 'must be a cipher suite number 0-17').transform(Number))
      .pipe(z.number().max(17, 'must be a cipher suite number 0-17'))
      .optional(),
    expected_guid: identity.optional(),
  });
}

export function redfishSchema(context: MethodSchemaContext) {
  return z.strictObject({
    agent: z.string(),
    ipaddr: address(context),
    ipport: port.default(443),
    login,
    passwd: password,
    uuid: text
      .pipe(
        z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be a Redfish system id (letters, digits, . _ -)'),
      )
      .default('System.Embedded.1'),
    tls: flag.default(false),
    ssl_verify: flag.optional(),
    ca_bundle: path.optional(),
    timeout: timeoutSeconds.optional(),
    expected_system_uuid: identity.optional(),
  });
}

/** Agent option keys lifeguard sets itself; `options` may not override them. */
export const MANAGED_AGENT_OPTIONS: ReadonlySet<string> = new Set([
  'action',
  'ip',
  'ipaddr',
  'ipport',
  'username',
  'login',
  'password',
  'passwd',
  'plug',
  'port',
  'nodename',
]);

const agentOptionValue = z
  .union([z.string(), z.number(), z.boolean()])
  .transform((value) => (typeof value === 'boolean' ? (value ? '1' : '0') : String(value)))
  .pipe(z.string().refine((value) => !/[\r\n\0]/.test(value), 'must not contain line breaks or NUL'));

export function fenceAgentSchema(context: MethodSchemaContext) {
  return z.strictObject({
    agent: z.string(),
    ipaddr: address(context).optional(),
    ipport: port.optional(),
    login: login.optional(),
    passwd: password.optional(),
    plug: text
      .pipe(
        z
          .string()
          .min(1)
          .regex(/^[^\r\n\0]+$/, 'must be one line'),
      )
      .optional(),
    options: z
      .record(z.string(), agentOptionValue)
      .superRefine((record, refinement) => {
        for (const key of Object.keys(record)) {
          if (!/^[a-z][a-z0-9_-]*$/.test(key)) {
            refinement.addIssue({
              code: 'custom',
              path: [key],
              message: 'option names are lower-case letters, digits, "_" and "-"',
            });
          } else if (MANAGED_AGENT_OPTIONS.has(key) || /pass(wd|word)?|secret|token/.test(key)) {
            refinement.addIssue({
              code: 'custom',
              path: [key],
              message:
                'is set by lifeguard from ipaddr/ipport/login/passwd/plug, or carries a secret (use passwd)',
            });
          }
        }
      })
      .default({}),
    timeout: timeoutSeconds.optional(),
    expected_guid: identity.optional(),
    expected_system_uuid: identity.optional(),
    ssl_verify: flag.optional(),
    ca_bundle: path.optional(),
  });
}

export const noopSchema = z.strictObject({ agent: z.string(), timeout: timeoutSeconds.optional() });

/** The 16 bytes of a normalised GUID with the first three fields byte-swapped (RFC 4122 ↔ SMBIOS). */
function swapFields(hex: string): string {
  const bytes = hex.match(/../g) ?? [];
  return [
    ...bytes.slice(0, 4).reverse(),
    ...bytes.slice(4, 6).reverse(),
    ...bytes.slice(6, 8).reverse(),
    ...bytes.slice(8),
  ].join('');
}

const reversed = (hex: string): string => (hex.match(/../g) ?? []).reverse().join('');

/**
 * True when two normalised GUIDs/UUIDs name the same 16 bytes, each written in one of the byte
 * orders tools use: RFC 4122 (Redfish `UUID`), the first three fields little-endian (SMBIOS,
 * dmidecode, `ipmitool mc guid` on most BMCs), or fully reversed (IPMI wire order). Operators copy the
 * identity from whichever tool they have; distinct machines do not collide under these orderings.
 */
export function sameIdentity(expected: string, actual: string): boolean {
  const candidates = (hex: string) => [hex, swapFields(hex), reversed(hex)];
  const actualCandidates = new Set(candidates(actual));
  return candidates(expected).some((candidate) => actualCandidates.has(candidate));
}
