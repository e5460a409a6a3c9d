import { ProvisioningKeys, ProvisioningReader, type StoredPort } from '@lifeguard/provisioning-blocks';
import type { ContextProvider, LifeguardProgram } from '../command-registration.ts';
import { CliError } from '../errors.ts';
import { renderFields } from '../output/table.ts';

/** A port's record and the entities still blocking it. */
export interface PortBlocks {
  readonly port: StoredPort;
  /** Entities (`DHCP`, `L2`, ...) that have not reported completion, sorted. */
  readonly blocks: ReadonlyArray<string>;
}

/** The human form of `lifeguard blocks <port>`. */
export function renderPortBlocks({ port, blocks }: PortBlocks): string {
  const addresses = port.fixed_ips
    .map((fixedIp) => `${fixedIp.ip_address ?? '(not allocated)'} on subnet ${fixedIp.subnet_id}`)
    .join(', ');
  const waiting =
    blocks.length === 0
      ? 'none'
      : `${blocks.join(', ')} (the port turns ACTIVE only when no provisioning block remains)`;
  let verdict: string;
  if (port.status === 'ACTIVE') verdict = 'ACTIVE';
  else if (blocks.length > 0) verdict = `${port.status}: waiting for ${blocks.join(' and ')}`;
  else if (!port.admin_state_up) verdict = `${port.status}: administratively down (admin_state_up false)`;
  else if (port['binding:host_id'] === '' || port['binding:vif_type'] === 'unbound')
    verdict = `${port.status}: no block left, but the port is not bound to a host`;
  else if (port['binding:vif_type'] === 'binding_failed') verdict = `${port.status}: binding failed`;
  else verdict = `${port.status}: no block left; the completion event is on its way`;
  return renderFields([
    ['port', port.id],
    ['status', verdict],
    ['provisioning blocks', waiting],
    ['admin_state_up', port.admin_state_up],
    ['network', port.network_id],
    ['device_owner', port.device_owner],
    ['device_id', port.device_id],
    ['binding:host_id', port['binding:host_id']],
    ['binding:vif_type', port['binding:vif_type']],
    ['binding:vnic_type', port['binding:vnic_type']],
    ['mac_address', port.mac_address],
    ['fixed_ips', addresses],
    ['revision', port.revision],
  ]);
}

/** `lifeguard blocks <port>`: the port's record, its provisioning blocks and status. */
export function registerBlocksCommand(program: LifeguardProgram, context: ContextProvider): void {
  program
    .command('blocks')
    .description("a port's record, the entities still blocking it (provisioning blocks) and its status")
    .argument('<port>', 'the port id, a unique start of it, or a device name as agents report it (tap…)')
    .option('--json', 'print JSON instead of fields')
    .action(async (portArgument, options) => {
      const cli = context();
      const records = new ProvisioningReader(await cli.redis(), new ProvisioningKeys(cli.keyPrefix));
      const portId = (await records.resolveDevice(portArgument)) ?? portArgument;
      const port = await records.port(portId);
      if (port === null) {
        throw new CliError(`no port ${portArgument} in the provisioning service's records`, [
          `(looked under the key prefix "${cli.keyPrefix}"; a port is known once a port.create command or an agent created it)`,
        ]);
      }
      const blocks = await records.blockingEntities(port.id, 'port');
      if (options.json) cli.printJson({ port, blocks, blocked: blocks.length > 0 });
      else cli.print(renderPortBlocks({ port, blocks }));
    });
}
