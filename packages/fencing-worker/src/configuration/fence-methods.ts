/**
 * The fencing methods fencing.yaml can name, after validation. Field names are lifeguard's; the
 * YAML keys they come from are InstanceHA's (docs/instance-ha-rules.md#configuration-files) and given beside each field.
 */

/** Settings every method has. */
interface MethodBase {
  /** Position in the host's topology, 0 = tried first. */
  readonly index: number;
  /** How the method appears in logs, events and the fence record: `ipmi`, `redfish`, `fence_ipmilan`, `noop`. */
  readonly name: string;
  /** `timeout`, clamped to 5-300 seconds; FENCING_TIMEOUT when absent. Per request / per program run. */
  readonly timeoutSeconds: number;
}

/** `agent: ipmi`: ipmitool over IPMI v2 (lanplus), password in IPMITOOL_PASSWORD (docs/instance-ha-rules.md#fence-agents). */
export interface IpmiMethod extends MethodBase {
  readonly kind: 'ipmi';
  /** `ipaddr`: an IP literal. */
  readonly address: string;
  /** `ipport` (required, as at InstanceHA HEAD). */
  readonly port: number;
  /** `login`. */
  readonly login: string;
  /** `passwd`. */
  readonly password: string;
  /** `cipher` (lifeguard): ipmitool `-C` cipher suite; ipmitool probes the BMC's list when absent. */
  readonly cipherSuite: number | null;
  /** `expected_guid` (lifeguard): the BMC's GUID as `ipmitool mc guid` prints it, normalised. */
  readonly expectedGuid: string | null;
}

/** TLS settings of a Redfish connection. */
export interface TlsSettings {
  /** Verify the BMC certificate (SSL_VERIFY; per method `ssl_verify`). */
  readonly verify: boolean;
  /** PEM file of trusted CAs (SSL_CA_BUNDLE; per method `ca_bundle`), or null for the system store. */
  readonly caBundlePath: string | null;
  /** Client certificate and key (SSL_CERT_PATH, SSL_KEY_PATH), or null. */
  readonly certificatePath: string | null;
  readonly keyPath: string | null;
}

/** `agent: redfish`: `POST <system>/Actions/ComputerSystem.Reset` with basic auth (docs/instance-ha-rules.md#fence-agents). */
export interface RedfishMethod extends MethodBase {
  readonly kind: 'redfish';
  readonly address: string;
  /** `ipport`, default 443. */
  readonly port: number;
  readonly login: string;
  readonly password: string;
  /** `uuid`: the system's id in `/redfish/v1/Systems/<id>`, default `System.Embedded.1`. */
  readonly systemId: string;
  /** `tls`: https when true; InstanceHA's default is false (plain http, credentials in clear). */
  readonly useTls: boolean;
  readonly tlsSettings: TlsSettings;
  /** `expected_system_uuid` (lifeguard): the system's Redfish `UUID` property, normalised. */
  readonly expectedSystemUuid: string | null;
}

/** `agent: fence_<name>`: any program of the fence-agents project, driven through its stdin protocol. */
export interface FenceAgentMethod extends MethodBase {
  readonly kind: 'fence-agent';
  /** The program name, `fence_ipmilan`. */
  readonly program: string;
  /** Absolute path of the program (LIFEGUARD_FENCE_AGENTS_DIRECTORY/<program>). */
  readonly path: string;
  /** `ipaddr` → agent option `ip`. */
  readonly address: string | null;
  /** `ipport` → `ipport`. */
  readonly port: number | null;
  /** `login` → `username`. */
  readonly login: string | null;
  /** `passwd` → `password`, written on standard input only. */
  readonly password: string | null;
  /** `plug` → `plug` (the VM or outlet for agents that need one). */
  readonly plug: string | null;
  /** `options`: further `key=value` lines for the agent (`lanplus: 1`, `cipher: 3`, `ssl_insecure: 1`). */
  readonly options: Readonly<Record<string, string>>;
  readonly expectedGuid: string | null;
  readonly expectedSystemUuid: string | null;
  /** Redfish TLS settings, used only to read `expected_system_uuid` for fence_redfish. */
  readonly tlsSettings: TlsSettings;
}

/** `agent: noop`: reports success without touching anything. Test beds only; refused unless allowed. */
export interface NoopMethod extends MethodBase {
  readonly kind: 'noop';
}

export type FenceMethod = IpmiMethod | RedfishMethod | FenceAgentMethod | NoopMethod;

/** A host's entry in fencing.yaml: its key and its methods in the order they are tried. */
export interface HostFencing {
  /** The key as written in fencing.yaml (`compute-0.example.com`). */
  readonly key: string;
  /** The key's short hostname, used for matching (`compute-0`). */
  readonly shortName: string;
  readonly methods: ReadonlyArray<FenceMethod>;
}

/** The password a method carries, or null. */
export function methodPassword(method: FenceMethod): string | null {
  return method.kind === 'noop' ? null : method.password;
}

/** A BMC's address for logs (`ipmi 10.0.0.5:623`); never a credential. */
export function describeMethod(method: FenceMethod): string {
  switch (method.kind) {
    case 'ipmi':
    case 'redfish':
      return `${method.name} ${method.address}:${method.port}`;
    case 'fence-agent':
      return `${method.name}${method.address ? ` ${method.address}${method.port ? `:${method.port}` : ''}` : ''}${method.plug ? ` plug ${method.plug}` : ''}`;
    case 'noop':
      return 'noop';
  }
}

/** Fence agents whose BMC speaks IPMI: their identity is read with `ipmitool mc guid`. */
export const IPMI_FENCE_AGENTS: ReadonlySet<string> = new Set([
  'fence_ipmilan',
  'fence_ipmilanplus',
  'fence_idrac',
  'fence_ilo3',
  'fence_ilo4',
  'fence_ilo5',
  'fence_imm',
]);

/** Fence agents whose BMC speaks Redfish: their identity is the system's `UUID`. */
export const REDFISH_FENCE_AGENTS: ReadonlySet<string> = new Set(['fence_redfish']);

/**
 * Fence agents that do not cut power and therefore prove nothing: fence_compute and fence_evacuate
 * only mark the host in Nova (docs/instance-ha-rules.md#fence_compute-and-fence_evacuate), fence_kdump only waits for a crash-kernel packet
 * (lifeguard's kdump handling is CHECK_KDUMP).
 */
export const REFUSED_FENCE_AGENTS: ReadonlySet<string> = new Set([
  'fence_compute',
  'fence_evacuate',
  'fence_kdump',
]);
