import type { FenceMethod } from '../configuration/fence-methods.ts';
import { FenceAgentDriver, type FenceAgentHooks } from './fence-agent-driver.ts';
import type { DriverContext, FenceDriver } from './fence-driver.ts';
import { DEFAULT_IPMITOOL_PATH, IpmiDriver } from './ipmi-driver.ts';
import { NoopDriver } from './noop-driver.ts';
import { RedfishDriver } from './redfish-driver.ts';

/** Everything the drivers share. */
export interface DriverFactoryContext extends DriverContext {
  /** LIFEGUARD_FENCING_ALLOW_NOOP. */
  allowNoop: boolean;
  /** LIFEGUARD_IPMITOOL_PATH (default /usr/bin/ipmitool). */
  ipmitoolPath?: string;
  fenceAgentHooks?: FenceAgentHooks;
}

/** The driver of one configured method. */
export function createDriver(method: FenceMethod, context: DriverFactoryContext): FenceDriver {
  const ipmitoolPath = context.ipmitoolPath ?? DEFAULT_IPMITOOL_PATH;
  switch (method.kind) {
    case 'ipmi':
      return new IpmiDriver(method, context, ipmitoolPath);
    case 'redfish':
      return new RedfishDriver(method, context);
    case 'fence-agent':
      return new FenceAgentDriver(method, context, context.fenceAgentHooks ?? {}, ipmitoolPath);
    case 'noop':
      return new NoopDriver(method, context);
  }
}
