import type { CloudModel } from '../model/cloud-model.ts';
import type { IdentityStore } from '../model/identity-store.ts';
import type { FaultInjector } from './fault-injector.ts';

/** What the HTTP routes share: the model, identity data, the auth mode and the API faults. */
export interface SimContext {
  model: CloudModel;
  identity: IdentityStore;
  /**
   * How Nova and Glance authenticate: `noauth2` (Nova's: `X-Auth-Token: <user>:<project>`, user
   * `admin` is admin) or `keystone` (a token issued by the simulated Keystone, as keystonemiddleware).
   */
  auth: 'noauth2' | 'keystone';
  faults: FaultInjector;
  /** Public base URL of the API listener, e.g. `http://127.0.0.1:8774` (set once listening). */
  baseUrl: string;
}
