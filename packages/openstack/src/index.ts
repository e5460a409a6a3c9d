export {
  type AuthProvider,
  type EndpointOverrides,
  type ServiceType,
  StaticTokenAuth,
} from './auth/auth-provider.ts';
export { CatalogService, selectEndpoint } from './auth/catalog.ts';
export {
  type ApplicationCredentials,
  KeystoneAuth,
  type KeystoneAuthOptions,
  type PasswordCredentials,
} from './auth/keystone-auth.ts';
export type { ComputeApi, MigrationFilter, NovaCallInfo } from './compute/compute-api.ts';
export { findComputeService, markService, pickComputeService } from './compute/compute-services.ts';
export {
  chooseMicroversion,
  compareMicroversions,
  MINIMUM_MICROVERSION,
  PREFERRED_MICROVERSION,
} from './compute/microversion.ts';
export { NovaClient, type NovaClientOptions } from './compute/nova-client.ts';
export {
  Aggregate,
  ComputeService,
  ComputeServiceUpdate,
  EmbeddedFlavor,
  Flavor,
  Hypervisor,
  Migration,
  Server,
  ServerExternalEvent,
  ServerExternalEventResult,
} from './compute/resources.ts';
export {
  AUTH_KEYS,
  AUTH_TYPES,
  type AuthType,
  type CloudConfig,
  CloudEntry,
  describeCloudConfig,
} from './config/cloud-config.ts';
export {
  type LoadCloudConfigOptions,
  loadCloudConfig,
  standardSearchDirectories,
} from './config/clouds-yaml.ts';
export {
  createAuthProvider,
  createOpenStackClients,
  type OpenStackClients,
  type OpenStackClientsOptions,
} from './create-openstack-clients.ts';
export {
  CloudConfigError,
  EndpointUnreachableError,
  GlanceApiError,
  KeystoneAuthError,
  MicroversionNotSupportedError,
  NovaApiError,
  OpenStackApiError,
  type OpenStackService,
  UnexpectedResponseError,
} from './errors.ts';
export { faultMessage } from './http/fault-body.ts';
export { currentRequestSignal, withRequestSignal } from './http/request-signal.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './http/retry-policy.ts';
export type { IdentityApi, Project } from './identity/identity-api.ts';
export { KeystoneClient } from './identity/keystone-client.ts';
export { GlanceClient, type GlanceClientOptions } from './image/glance-client.ts';
export type { ImageApi } from './image/image-api.ts';
export { Image } from './image/resources.ts';
