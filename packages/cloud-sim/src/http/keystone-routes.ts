import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IdentityStore, SimToken, SimUser } from '../model/identity-store.ts';
import { DEFAULT_DOMAIN } from '../model/identity-store.ts';
import { keystoneTimestamp } from '../model/time-format.ts';
import type { SimContext } from './sim-context.ts';

function keystoneError(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send({ error: { code: status, message, title } });
}

const unauthorized = (reply: FastifyReply) =>
  keystoneError(reply, 401, 'Unauthorized', 'The request you have made requires authentication.');

type Reference = { id?: string; name?: string; domain?: { id?: string; name?: string } };

/** The service catalog: compute, image and identity, each with public, internal and admin endpoints in `RegionOne`. */
function catalog(baseUrl: string) {
  const region = 'RegionOne';
  const service = (type: string, name: string, url: string) => ({
    type,
    name,
    id: `${type}-service`,
    endpoints: ['public', 'internal', 'admin'].map((itf) => ({
      id: `${type}-${itf}`,
      interface: itf,
      region,
      region_id: region,
      url,
    })),
  });
  return [
    service('identity', 'keystone', `${baseUrl}/identity/v3`),
    service('compute', 'nova', `${baseUrl}/compute/v2.1`),
    service('image', 'glance', `${baseUrl}/image`),
  ];
}

/** The body Keystone answers for a token: user, project, roles, catalog and application credential. */
function tokenBody(context: SimContext, token: SimToken, user: SimUser) {
  const { identity } = context;
  const project = identity.projects.get(token.projectId);
  return {
    token: {
      methods: token.methods,
      user: { id: user.id, name: user.name, domain: DEFAULT_DOMAIN, password_expires_at: null },
      audit_ids: [token.value.slice(-22)],
      expires_at: keystoneTimestamp(token.expiresAt),
      issued_at: keystoneTimestamp(token.issuedAt),
      project: { id: project?.id, name: project?.name, domain: DEFAULT_DOMAIN },
      is_domain: false,
      roles: [
        { id: 'admin-role', name: 'admin' },
        { id: 'member-role', name: 'member' },
        { id: 'reader-role', name: 'reader' },
      ],
      catalog: catalog(context.baseUrl),
      ...(token.applicationCredentialId
        ? {
            application_credential: {
              id: token.applicationCredentialId,
              name: identity.applicationCredentials.get(token.applicationCredentialId)?.name,
              restricted: true,
            },
          }
        : {}),
    },
  };
}

/** The user a reference names: by id, or by name and domain. */
function findUser(identity: IdentityStore, reference: Reference | undefined): SimUser | undefined {
  if (!reference) return undefined;
  if (reference.id) return identity.users.get(reference.id);
  if (reference.name && reference.domain) return identity.userByName(reference.name, reference.domain);
  return undefined;
}

/**
 * `GET /v3/projects` (filters `name`, `domain_id`): with keystone auth the caller's token must be
 * valid (every simulated user is admin); with noauth2 any caller may list.
 */
function listProjects(context: SimContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (
      context.auth === 'keystone' &&
      !context.identity.validate(request.headers['x-auth-token'] as string | undefined)
    )
      return unauthorized(reply);
    const query = request.query as { name?: string; domain_id?: string };
    const projects = [...context.identity.projects.values()].filter(
      (project) =>
        (query.name === undefined || project.name === query.name) &&
        (query.domain_id === undefined || project.domainId === query.domain_id),
    );
    const self = `${context.baseUrl}/identity/v3/projects`;
    return reply.type('application/json').send({
      projects: projects.map((project) => ({
        id: project.id,
        name: project.name,
        domain_id: project.domainId,
        description: '',
        enabled: true,
        is_domain: false,
        parent_id: project.domainId,
        tags: [],
        options: {},
        links: { self: `${self}/${project.id}` },
      })),
      links: { self, previous: null, next: null },
    });
  };
}

/** `POST /v3/auth/tokens`: a token by `application_credential` or `password`, 201 with `X-Subject-Token`. */
function issueToken(context: SimContext) {
  const { identity } = context;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const auth = (
      (request.body ?? {}) as {
        auth?: { identity?: Record<string, unknown>; scope?: { project?: Reference } };
      }
    ).auth;
    const methods = auth?.identity?.methods;
    if (!auth || !Array.isArray(methods) || methods.length === 0) {
      return keystoneError(
        reply,
        400,
        'Bad Request',
        "Invalid input for field 'identity': 'methods' is a required property",
      );
    }
    if (methods.includes('application_credential')) {
      const given = auth.identity?.application_credential as
        | { id?: string; name?: string; secret?: string; user?: Reference }
        | undefined;
      let credential = given?.id ? identity.applicationCredentials.get(given.id) : undefined;
      if (!credential && given?.name) {
        const owner = findUser(identity, given.user);
        credential = [...identity.applicationCredentials.values()].find(
          (each) => each.name === given.name && each.userId === owner?.id,
        );
      }
      if (!credential || credential.secret !== given?.secret) return unauthorized(reply);
      if (credential.expiresAt !== null && credential.expiresAt <= Date.now()) return unauthorized(reply);
      const user = identity.users.get(credential.userId)!;
      const token = identity.issue(user, credential.projectId, ['application_credential'], credential.id);
      return reply
        .code(201)
        .header('x-subject-token', token.value)
        .send(tokenBody(context, token, user));
    }
    if (!methods.includes('password')) return unauthorized(reply);
    const password = auth.identity?.password as { user?: Reference & { password?: string } } | undefined;
    const user = findUser(identity, password?.user);
    if (!user || user.password !== password?.user?.password) return unauthorized(reply);
    const scope = auth.scope?.project;
    let projectId = user.projectId;
    if (scope) {
      const project = scope.id
        ? identity.projects.get(scope.id)
        : scope.name && scope.domain
          ? identity.projectByName(scope.name, scope.domain)
          : undefined;
      if (!project) return unauthorized(reply);
      if (project.id !== user.projectId) return unauthorized(reply);
      projectId = project.id;
    }
    const token = identity.issue(user, projectId, ['password']);
    return reply
      .code(201)
      .header('x-subject-token', token.value)
      .send(tokenBody(context, token, user));
  };
}

/** `POST /v3/users/{id}/application_credentials`: only by the user itself, not with an application credential. */
function createApplicationCredential(context: SimContext) {
  const { identity } = context;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = identity.validate(request.headers['x-auth-token'] as string | undefined);
    if (!caller) return unauthorized(reply);
    const { userId } = request.params as { userId: string };
    if (caller.userId !== userId)
      return keystoneError(
        reply,
        403,
        'Forbidden',
        'You are not authorized to perform the requested action.',
      );
    if (caller.applicationCredentialId) {
      return keystoneError(
        reply,
        403,
        'Forbidden',
        "Using method 'application_credential' is not allowed for managing additional application credentials.",
      );
    }
    const spec = (
      (request.body ?? {}) as {
        application_credential?: { name?: string; secret?: string; expires_at?: string };
      }
    ).application_credential;
    if (!spec?.name)
      return keystoneError(
        reply,
        400,
        'Bad Request',
        "Invalid input for field 'application_credential': 'name' is a required property",
      );
    const user = identity.users.get(userId)!;
    const expires = spec.expires_at ? Date.parse(spec.expires_at) : null;
    const credential = identity.addApplicationCredential(user, spec.name, spec.secret, expires);
    return reply.code(201).send({
      application_credential: {
        id: credential.id,
        name: credential.name,
        secret: credential.secret,
        user_id: user.id,
        project_id: credential.projectId,
        expires_at: spec.expires_at ?? null,
        unrestricted: false,
        roles: [{ id: 'admin-role', name: 'admin' }],
      },
    });
  };
}

/**
 * The Keystone v3 subset the clients use, under `/identity`: the version document, `POST
 * /v3/auth/tokens` with `password` (user and project by id or by name and domain) and
 * `application_credential` (by id, or by name with its user), answering 201 with `X-Subject-Token`
 * and the catalog (compute, image, identity; public, internal and admin endpoints in `RegionOne`);
 * `GET /v3/auth/tokens` (validate), `DELETE /v3/auth/tokens` (revoke), `GET /v3/projects`, and
 * `POST /v3/users/{id}/application_credentials`.
 */
export function registerKeystoneRoutes(app: FastifyInstance, context: SimContext): void {
  const { identity } = context;

  app.get('/v3', async () => ({
    version: {
      id: 'v3.14',
      status: 'stable',
      updated: '2020-04-07T00:00:00Z',
      links: [{ rel: 'self', href: `${context.baseUrl}/identity/v3/` }],
      'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
    },
  }));

  app.post('/v3/auth/tokens', issueToken(context));

  app.get('/v3/auth/tokens', async (request, reply) => {
    if (!identity.validate(request.headers['x-auth-token'] as string | undefined)) return unauthorized(reply);
    const subject = identity.validate(request.headers['x-subject-token'] as string | undefined);
    if (!subject) return keystoneError(reply, 404, 'Not Found', 'Could not find token.');
    return reply
      .header('x-subject-token', subject.value)
      .send(tokenBody(context, subject, identity.users.get(subject.userId)!));
  });

  app.delete('/v3/auth/tokens', async (request, reply) => {
    const caller = identity.validate(request.headers['x-auth-token'] as string | undefined);
    if (!caller) return unauthorized(reply);
    const subject = identity.validate(request.headers['x-subject-token'] as string | undefined);
    if (!subject) return keystoneError(reply, 404, 'Not Found', 'Could not find token.');
    identity.revoke(subject.value);
    return reply.code(204).send();
  });

  app.post('/v3/users/:userId/application_credentials', createApplicationCredential(context));
  app.get('/v3/projects', listProjects(context));
}
