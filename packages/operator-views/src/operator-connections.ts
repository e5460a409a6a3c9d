import { IncidentStore } from '@lifeguard/instance-ha';
import { createOpenStackClients, type OpenStackClients } from '@lifeguard/openstack';
import { OnDemandConnections, type OnDemandConnectionsOptions } from '@lifeguard/runtime';

export interface OperatorConnectionsOptions extends OnDemandConnectionsOptions {
  /** The environment Nova's and Glance's clients are configured from (`OS_CLOUD`, clouds.yaml, `OS_*`). */
  readonly env: NodeJS.ProcessEnv;
  /** One OpenStack request's time limit, in milliseconds (default clouds.yaml `api_timeout`, else 30 s). */
  readonly openstackTimeoutMilliseconds?: number;
  /** Attempts of a failed OpenStack request, the first included (default the clients' own, 4). */
  readonly openstackAttempts?: number;
}

/**
 * The connections of an operator tool (the `lifeguard` command, the console), each made on first use:
 * Redis and RabbitMQ (OnDemandConnections), the OpenStack clients, and lifeguard's incidents in Redis.
 */
export class OperatorConnections extends OnDemandConnections {
  private clients: OpenStackClients | null = null;

  constructor(private readonly settings: OperatorConnectionsOptions) {
    super(settings);
  }

  /** Nova and Glance. @throws CloudConfigError when no cloud is configured */
  openstack(): OpenStackClients {
    const { env, openstackTimeoutMilliseconds, openstackAttempts } = this.settings;
    this.clients ??= createOpenStackClients({
      env,
      logger: this.logger,
      ...(openstackTimeoutMilliseconds === undefined
        ? {}
        : { timeoutMilliseconds: openstackTimeoutMilliseconds }),
      ...(openstackAttempts === undefined ? {} : { retry: { attempts: openstackAttempts } }),
    });
    return this.clients;
  }

  /** lifeguard's incidents under the deployment's key prefix. */
  async incidents(): Promise<IncidentStore> {
    return new IncidentStore(await this.redis(), this.keyPrefix);
  }
}
