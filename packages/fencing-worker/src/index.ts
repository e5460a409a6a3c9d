export { bmcAddressProblem } from './configuration/bmc-address.ts';
export {
  describeMethod,
  type FenceAgentMethod,
  type FenceMethod,
  type HostFencing,
  type IpmiMethod,
  type NoopMethod,
  type RedfishMethod,
  type TlsSettings,
} from './configuration/fence-methods.ts';
export {
  type FencingConfigOptions,
  FencingConfiguration,
  loadFencingConfig,
  parseFencingConfig,
} from './configuration/fencing-config.ts';
export { normaliseIdentity, sameIdentity } from './configuration/method-schemas.ts';
export { shortHostname } from './configuration/short-hostname.ts';
export { createDriver, type DriverFactoryContext } from './drivers/create-driver.ts';
export { FenceAgentDriver, type FenceAgentHooks } from './drivers/fence-agent-driver.ts';
export {
  DEFAULT_DRIVER_TIMING,
  type DriverContext,
  type DriverTiming,
  type FenceDriver,
  type PowerOffOutcome,
  type PowerState,
} from './drivers/fence-driver.ts';
export { IpmiDriver, Ipmitool } from './drivers/ipmi-driver.ts';
export { NoopDriver } from './drivers/noop-driver.ts';
export { RedfishClient } from './drivers/redfish-client.ts';
export { RedfishDriver } from './drivers/redfish-driver.ts';
export {
  FenceCredentialsError,
  FenceIdentityMismatchError,
  FencingConfigurationError,
  FencingError,
  type FencingErrorKind,
  FencingFailedError,
} from './errors.ts';
export { expectedIdentity, HostFencer, type PowerOffResult } from './fencing/host-fencer.ts';
export { redactSecrets } from './process/redact-secrets.ts';
