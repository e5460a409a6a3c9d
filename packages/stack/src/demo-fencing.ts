import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { CloudSim } from '@lifeguard/cloud-sim';
import { stringify } from 'yaml';
import type { DemoCloudLayout } from './demo-cloud.ts';

/** Where the fencing worker looks for fence agents when LIFEGUARD_FENCE_AGENTS_DIRECTORY is unset. */
export const DEFAULT_FENCE_AGENTS_DIRECTORY = '/usr/sbin';

/**
 * How the demo hosts are fenced: `fence_redfish` (Debian's fence-agents) when the fencing worker can
 * run it, lifeguard's built-in Redfish driver (`agent: redfish`) otherwise, so the simulated cloud
 * needs no system package.
 */
export interface DemoFencing {
  readonly driver: 'fence_redfish' | 'redfish';
  /** Where fence_redfish is, or would be (`<LIFEGUARD_FENCE_AGENTS_DIRECTORY>/fence_redfish`). */
  readonly fenceRedfishPath: string;
}

/**
 * The fence agent directory the fencing worker will use: LIFEGUARD_FENCE_AGENTS_DIRECTORY of its
 * environment (the environments are given lowest first, later ones winning), /usr/sbin when unset.
 */
export function fenceAgentsDirectory(
  ...environments: ReadonlyArray<Readonly<Record<string, string>>>
): string {
  let directory = DEFAULT_FENCE_AGENTS_DIRECTORY;
  for (const environment of environments) {
    const value = environment.LIFEGUARD_FENCE_AGENTS_DIRECTORY;
    if (value !== undefined && value !== '') directory = value;
  }
  return directory;
}

/** True when `path` names a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Chooses the demo's fence driver: fence_redfish when `executable(<directory>/fence_redfish)`. */
export function chooseDemoFencing(
  agentsDirectory: string,
  executable: (path: string) => boolean = isExecutable,
): DemoFencing {
  const fenceRedfishPath = join(agentsDirectory, 'fence_redfish');
  return { driver: executable(fenceRedfishPath) ? 'fence_redfish' : 'redfish', fenceRedfishPath };
}

/** The one start-up line that says which driver fences the demo hosts and when fence_redfish is used. */
export function demoFencingMessage(fencing: DemoFencing): string {
  return fencing.driver === 'fence_redfish'
    ? `the demo hosts are fenced by fence_redfish (${fencing.fenceRedfishPath}) through their simulated Redfish BMCs`
    : `the demo hosts are fenced by lifeguard's built-in Redfish driver through their simulated Redfish BMCs; ` +
        `fence_redfish is used instead when installed at ${fencing.fenceRedfishPath} ` +
        '(Debian package fence-agents; LIFEGUARD_FENCE_AGENTS_DIRECTORY names another directory)';
}

/**
 * The fencing.yaml of the simulated cloud: every host fenced through its cloud-sim BMC (self-signed
 * certificate, so TLS is not verified) by `fencing.driver`. The built-in driver also checks the
 * system's UUID (`expected_system_uuid`), as an operator's entry should.
 */
export function simulatedFencingYaml(sim: CloudSim, layout: DemoCloudLayout, fencing: DemoFencing): string {
  const entries: Record<string, unknown> = {};
  for (const host of layout.hosts) {
    const bmc = sim.bmc(host);
    const address = bmc.address === '0.0.0.0' || bmc.address === '::' ? '127.0.0.1' : bmc.address;
    const access = { ipaddr: address, ipport: bmc.port, login: bmc.username, passwd: bmc.password };
    const system = sim.model.host(host).bmc;
    entries[host] =
      fencing.driver === 'fence_redfish'
        ? { agent: 'fence_redfish', ...access, options: { ssl_insecure: 1 } }
        : {
            agent: 'redfish',
            ...access,
            uuid: system.systemId,
            tls: true,
            ssl_verify: false,
            expected_system_uuid: system.uuid,
          };
  }
  const by =
    fencing.driver === 'fence_redfish' ? 'the fence_redfish agent' : "lifeguard's built-in Redfish driver";
  return `# The simulated cloud's BMCs, fenced by ${by}.\n${stringify({ FencingConfig: entries })}`;
}
