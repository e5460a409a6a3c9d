#!/usr/bin/env node
import { createHostAgentLogger, startHostAgent } from './host-agent.ts';
import { HostAgentConfigError, loadHostAgentSettings } from './settings.ts';

/** Exit status for invalid configuration (sysexits EX_CONFIG), as the workers use it. */
const EXIT_CONFIG = 78;

async function main(): Promise<void> {
  const settings = loadHostAgentSettings();
  const logger = createHostAgentLogger(settings);
  const agent = await startHostAgent(settings, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    agent.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof HostAgentConfigError) {
    process.stderr.write(`lifeguard-host-agent: ${error.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  process.stderr.write(`lifeguard-host-agent: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
