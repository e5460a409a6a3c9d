import { urlHost } from '../configuration/bmc-address.ts';
import type { TlsSettings } from '../configuration/fence-methods.ts';
import { normaliseIdentity } from '../configuration/method-schemas.ts';
import { FencingError } from '../errors.ts';
import { HttpTransportError, type JsonResponse, requestJson } from '../http/json-request.ts';
import type { PowerState } from './fence-driver.ts';

/** Where one Redfish computer system is and how to log in. */
export interface RedfishTarget {
  useTls: boolean;
  address: string;
  port: number;
  login: string;
  password: string;
  /** `/redfish/v1/Systems/<id>`, or null to take the last member of `/redfish/v1/Systems` (as fence_redfish). */
  systemPath: string | null;
  tls: TlsSettings;
  timeoutMilliseconds: number;
}

const REDFISH_HEADERS = { 'OData-Version': '4.0' };

/** The system resource fields lifeguard reads. */
interface ComputerSystem {
  PowerState?: unknown;
  UUID?: unknown;
}

/**
 * The few Redfish calls fencing needs, with InstanceHA's error reading (docs/instance-ha-rules.md#fence-agents): 401/403 are
 * credentials errors (never retried), 5xx and transport failures are `unreachable` (retried).
 */
export class RedfishClient {
  private resolvedSystemPath: string | null;

  constructor(private readonly target: RedfishTarget) {
    this.resolvedSystemPath = target.systemPath;
  }

  /** `redfish https://10.0.0.5:443`, for messages. */
  get label(): string {
    return `redfish ${this.origin}`;
  }

  private get origin(): string {
    return `${this.target.useTls ? 'https' : 'http'}://${urlHost(this.target.address)}:${this.target.port}`;
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<JsonResponse> {
    try {
      return await requestJson({
        method,
        url: `${this.origin}${path}`,
        ...(body === undefined ? {} : { body }),
        basicAuth: { user: this.target.login, password: this.target.password },
        headers: REDFISH_HEADERS,
        tls: this.target.tls,
        timeoutMilliseconds: this.target.timeoutMilliseconds,
      });
    } catch (error) {
      if (error instanceof HttpTransportError) {
        if (error.untrustedCertificate) {
          throw new FencingError(
            'configuration',
            `${error.message} (give the BMC's CA in SSL_CA_BUNDLE or ca_bundle, or set ssl_verify: false)`,
          );
        }
        throw new FencingError('unreachable', error.message);
      }
      throw error;
    }
  }

  /** Turns 401/403/5xx/other non-2xx into FencingErrors; 2xx passes. */
  private check(response: JsonResponse, what: string): JsonResponse {
    const { status } = response;
    if (status >= 200 && status < 300) return response;
    if (status === 401 || status === 403) {
      throw new FencingError(
        'credentials',
        `${this.label} ${what}: HTTP ${status}, the BMC rejected the credentials`,
      );
    }
    if (status >= 500) throw new FencingError('unreachable', `${this.label} ${what}: HTTP ${status}`);
    throw new FencingError(
      'refused',
      `${this.label} ${what}: HTTP ${status}${redfishMessage(response.body)}`,
    );
  }

  /** The system's path, discovering it once when fencing.yaml gave none. */
  async systemPath(): Promise<string> {
    if (this.resolvedSystemPath) return this.resolvedSystemPath;
    const root = this.check(await this.call('GET', '/redfish/v1'), 'GET /redfish/v1').body as {
      Systems?: { '@odata.id'?: string };
    } | null;
    const collectionPath = root?.Systems?.['@odata.id'];
    if (!collectionPath)
      throw new FencingError('refused', `${this.label}: /redfish/v1 has no Systems collection`);
    const collection = this.check(await this.call('GET', collectionPath), `GET ${collectionPath}`).body as {
      Members?: Array<{ '@odata.id'?: string }>;
    } | null;
    const last = collection?.Members?.at(-1)?.['@odata.id'];
    if (!last) throw new FencingError('refused', `${this.label}: ${collectionPath} lists no system`);
    this.resolvedSystemPath = last;
    return last;
  }

  private async system(): Promise<ComputerSystem> {
    const path = await this.systemPath();
    const body = this.check(await this.call('GET', path), `GET ${path}`).body;
    if (typeof body !== 'object' || body === null) {
      throw new FencingError('refused', `${this.label} GET ${path}: the answer is not a JSON object`);
    }
    return body as ComputerSystem;
  }

  /** `PowerState` of the system: `Off` → off; anything else (On, PoweringOn, PoweringOff) → on. */
  async powerState(): Promise<PowerState> {
    const state = (await this.system()).PowerState;
    if (typeof state !== 'string')
      throw new FencingError('refused', `${this.label}: the system has no PowerState`);
    return state.trim().toUpperCase() === 'OFF' ? 'off' : 'on';
  }

  /** The system's `UUID`, normalised. */
  async systemUuid(): Promise<string> {
    const uuid = (await this.system()).UUID;
    if (typeof uuid !== 'string' || uuid.trim() === '') {
      throw new FencingError('refused', `${this.label}: the system reports no UUID`);
    }
    return normaliseIdentity(uuid);
  }

  /**
   * `POST <system>/Actions/ComputerSystem.Reset {"ResetType": type}`.
   * @returns `accepted` for 2xx; for 400/409 the power state read right after (`already-off`/`already-on`
   *   when it already is what was asked)
   * @throws FencingError credentials (401/403), unreachable (5xx, transport), refused (400/409 in the
   *   other state, other codes)
   */
  async reset(type: 'ForceOff' | 'On'): Promise<'accepted' | 'already-off' | 'already-on'> {
    const path = `${await this.systemPath()}/Actions/ComputerSystem.Reset`;
    const response = await this.call('POST', path, { ResetType: type });
    if (response.status === 400 || response.status === 409) {
      // iDRAC answers 409 and iLO 400 when the system already is in the requested state.
      const state = await this.powerState();
      if (type === 'ForceOff' && state === 'off') return 'already-off';
      if (type === 'On' && state === 'on') return 'already-on';
      throw new FencingError(
        'refused',
        `${this.label} ${type}: HTTP ${response.status} while PowerState is ${state}${redfishMessage(response.body)}`,
      );
    }
    this.check(response, `POST ${type}`);
    return 'accepted';
  }
}

/** Redfish's extended error message, when the body has one. */
function redfishMessage(body: unknown): string {
  const error = (
    body as { error?: { message?: unknown; '@Message.ExtendedInfo'?: Array<{ Message?: unknown }> } }
  )?.error;
  const text = error?.['@Message.ExtendedInfo']?.[0]?.Message ?? error?.message;
  return typeof text === 'string' ? ` (${text.slice(0, 200)})` : '';
}
