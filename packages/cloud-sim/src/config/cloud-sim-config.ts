import { z } from 'zod';

const whole = (minimum: number) => z.coerce.number().int().min(minimum);

/** A TCP port number, 0 (any free port) to 65535. */
export const listenPort = () => whole(0).max(65535);

/** Defaults of the CLOUD_SIM_* keys that both the standalone cloud-sim and the demo cloud read. */
export interface CloudSimConfigDefaults {
  host: string;
  port: number;
  redfishPort: number;
  hosts: number;
  /** Upper bound of CLOUD_SIM_HOSTS. */
  maximumHosts: number;
  reportIntervalSeconds: number;
  serviceDownTimeSeconds: number;
  bootMilliseconds: number;
  evacuationAcceptMilliseconds: number;
  evacuationRebuildMilliseconds: number;
}

/**
 * The CLOUD_SIM_* environment keys shared by every process that runs cloud-sim (names, validation,
 * and the caller's defaults), as a zod object shape to spread into its configuration schema.
 */
export function cloudSimConfigKeys(defaults: CloudSimConfigDefaults) {
  return {
    /** Listen address of the API and Redfish listeners. */
    CLOUD_SIM_HOST: z.string().min(1).default(defaults.host),
    /** Port of the API listener (Nova /compute, Glance /image, Keystone /identity, control /_sim). */
    CLOUD_SIM_PORT: listenPort().default(defaults.port),
    /** Port of the HTTPS Redfish listener (one BMC per host). */
    CLOUD_SIM_REDFISH_PORT: listenPort().default(defaults.redfishPort),
    /** Number of compute hosts. */
    CLOUD_SIM_HOSTS: whole(1).max(defaults.maximumHosts).default(defaults.hosts),
    /** Nova's report_interval and service_down_time, in seconds. */
    CLOUD_SIM_REPORT_INTERVAL_SECONDS: z.coerce.number().positive().default(defaults.reportIntervalSeconds),
    CLOUD_SIM_SERVICE_DOWN_TIME_SECONDS: z.coerce
      .number()
      .positive()
      .default(defaults.serviceDownTimeSeconds),
    /** Milliseconds from a Redfish power-on until nova-compute reports again. */
    CLOUD_SIM_BOOT_MILLISECONDS: whole(0).default(defaults.bootMilliseconds),
    /** Evacuate accept latency and rebuild time, in milliseconds. */
    CLOUD_SIM_EVACUATION_ACCEPT_MILLISECONDS: whole(0).default(defaults.evacuationAcceptMilliseconds),
    CLOUD_SIM_EVACUATION_REBUILD_MILLISECONDS: whole(0).default(defaults.evacuationRebuildMilliseconds),
  };
}
