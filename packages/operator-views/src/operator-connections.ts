import { IncidentStore } from '@lifeguard/instance-ha';
import { createOpenStackClients, type OpenStackClients } from '@lifeguard/openstack';
import { OnDemandConnections, type OnDemandConnectionsOptions } from '@lifeguard/runtime';

export interface OperatorConnectionsOptions extends OnDemandConnectionsOptions {
  /** The environment Nova's and Glance's clients are configured from (`OS_CLOUD`, clouds.yaml, `OS_*`). */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The connections of an operator tool (the `lifeguard` command, the console), each made on first use:
 * Redis and RabbitMQ (OnDemandConnections), the OpenStack clients, and lifeguard's incidents in Redis.
 */
export class OperatorConnections extends OnDemandConnections {
  private clients: OpenStackClients | null = null;
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: OperatorConnectionsOptions) {
    super(options);
    this.env = options.env;
  }

  /** Nova and Glance. @throws CloudConfigError when no cloud is configured */
  openstack(): OpenStackClients {
    this.clients ??= createOpenStackClients({ env: this.env, logger: this.logger });
    return this.clients;
  }

  /** lifeguard's incidents under the deployment's key prefix. */
  async incidents(): Promise<IncidentStore> {
    return new IncidentStore(await this.redis(), this.keyPrefix);
  }
}
