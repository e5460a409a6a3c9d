import { z } from 'zod';
import type { AuthProvider } from '../auth/auth-provider.ts';
import {
  type OpenStackTransport,
  type ServiceTransportOptions,
  serviceTransport,
} from '../http/openstack-transport.ts';
import { parseBody } from '../http/parse-body.ts';
import type { IdentityApi, Project } from './identity-api.ts';

const ProjectsBody = z.object({
  projects: z.array(z.object({ id: z.string().min(1), name: z.string(), domain_id: z.string() })),
});

/**
 * The Identity API client (Keystone v3); implements IdentityApi. The endpoint is the catalog's
 * `identity` URL (or clouds.yaml `identity_endpoint_override`); `/v3` is appended unless present.
 * Errors: OpenStackApiError (service `identity`: status, Keystone's message, request id),
 * EndpointUnreachableError, KeystoneAuthError, UnexpectedResponseError.
 */
export class KeystoneClient implements IdentityApi {
  private readonly transport: OpenStackTransport;
  private readonly auth: AuthProvider;

  constructor(options: ServiceTransportOptions) {
    this.auth = options.auth;
    this.transport = serviceTransport('identity', options);
  }

  async projectsNamed(name: string): Promise<Project[]> {
    const endpoint = (await this.auth.endpoint('identity')).replace(/\/+$/, '');
    const url = new URL(/\/v3$/.test(endpoint) ? `${endpoint}/projects` : `${endpoint}/v3/projects`);
    url.searchParams.set('name', name);
    const response = await this.transport.request({
      method: 'GET',
      url: url.toString(),
      operation: 'GET /v3/projects',
    });
    return parseBody(ProjectsBody, response, 'identity', 'GET /v3/projects').projects;
  }
}
