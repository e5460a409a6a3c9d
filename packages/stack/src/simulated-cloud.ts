import type { CloudSim } from '@lifeguard/cloud-sim';
import { type DemoCloudLayout, startDemoCloud } from './demo-cloud.ts';
import {
  chooseDemoFencing,
  demoFencingMessage,
  fenceAgentsDirectory,
  simulatedFencingYaml,
} from './demo-fencing.ts';
import { checkVhostUnused, resetSimulatedState } from './preflight.ts';
import {
  instanceHaConfigYaml,
  type StackFiles,
  simulatedCloudsYaml,
  writeFileAtomically,
  writeGeneratedFile,
} from './stack-files.ts';
import { type ResolvedStackOptions, stackRedis } from './stack-options.ts';

/** What the simulated cloud of a stack is started with. */
export interface SimulatedCloudStart {
  readonly options: ResolvedStackOptions;
  readonly simulated: Extract<ResolvedStackOptions['cloud'], { kind: 'simulated' }>;
  /** cloud-sim's API port and its Redfish BMCs' port (0: a free one). */
  readonly port: number;
  readonly redfishPort: number;
  readonly files: StackFiles;
  /** The environment the workers inherit (where LIFEGUARD_FENCE_AGENTS_DIRECTORY may be set). */
  readonly inheritedEnvironment: Readonly<Record<string, string>>;
  readonly log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/**
 * Prepares and starts the simulated cloud of a stack: checks that no lifeguard consumes the vhost
 * (VhostInUseError), resets the previous simulated run's Redis keys (ForeignStateError when they are
 * not a simulated stack's), starts cloud-sim with the demo layout and writes clouds.yaml, config.yaml
 * and fencing.yaml — fenced by fence_redfish when the fencing worker can run it, by the built-in
 * Redfish driver otherwise, said once.
 * @throws VhostInUseError, ForeignStateError, and cloud-sim's errors when it cannot listen
 */
export async function startSimulatedCloud(start: SimulatedCloudStart): Promise<{
  sim: CloudSim;
  layout: DemoCloudLayout;
}> {
  const { options, files, log } = start;
  await checkVhostUnused(options.amqpUrl);
  const deleted = await resetSimulatedState(stackRedis(options), options.keyPrefix);
  if (deleted > 0)
    log('info', `reset ${deleted} Redis keys of the previous simulated run (prefix ${options.keyPrefix}:)`);
  const { sim, layout } = await startDemoCloud({
    ...start.simulated,
    port: start.port,
    redfishPort: start.redfishPort,
  });
  writeFileAtomically(files.cloudsYaml!, simulatedCloudsYaml(sim));
  if (writeGeneratedFile(files.configYaml, instanceHaConfigYaml(options.instanceHa)) === 'kept') {
    log(
      'warn',
      `kept ${files.configYaml} as you edited it (the simulated cloud's defaults are not written over it; delete it to have them again)`,
    );
  }
  const fencing = chooseDemoFencing(
    fenceAgentsDirectory(
      start.inheritedEnvironment,
      options.environment,
      options.workerEnvironment['fencing-worker'] ?? {},
    ),
  );
  writeFileAtomically(files.fencingYaml, simulatedFencingYaml(sim, layout, fencing));
  log('info', demoFencingMessage(fencing));
  log('info', `cloud-sim listening on ${sim.urls.api} (Redfish BMCs ${sim.urls.redfish})`);
  return { sim, layout };
}
