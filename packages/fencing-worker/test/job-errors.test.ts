import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IncidentNotFoundError } from '@lifeguard/instance-ha';
import { EndpointUnreachableError, KeystoneAuthError, NovaApiError } from '@lifeguard/openstack';
import {
  backoffByErrorKind,
  classifyJobError,
  FenceCredentialsError,
  FencingError,
  FencingFailedError,
  mergePrometheusText,
} from '../src/index.ts';

describe('fence job errors', () => {
  it('sorts errors into recoverable and unrecoverable kinds', () => {
    const unreachable = new FencingError('unreachable', 'no answer');
    const credentials = new FenceCredentialsError('HTTP 401');
    assert.deepEqual(classifyJobError(unreachable), { kind: 'unreachable', recoverable: true });
    assert.deepEqual(classifyJobError(credentials), { kind: 'credentials', recoverable: false });
    assert.deepEqual(
      classifyJobError(new FencingFailedError('compute-1', [{ method: 'ipmi', error: credentials }])),
      { kind: 'credentials', recoverable: false },
    );
    assert.deepEqual(
      classifyJobError(
        new FencingFailedError('compute-1', [
          { method: 'ipmi', error: credentials },
          { method: 'redfish', error: unreachable },
        ]),
      ),
      { kind: 'unreachable', recoverable: true },
      'one recoverable method failure keeps the whole fence recoverable',
    );
    assert.deepEqual(classifyJobError(new NovaApiError('PUT /os-services/x', 403, 'forbidden', null)), {
      kind: 'openstack-credentials',
      recoverable: false,
    });
    assert.deepEqual(classifyJobError(new NovaApiError('PUT /os-services/x', 503, 'busy', null)), {
      kind: 'nova-unreachable',
      recoverable: true,
    });
    assert.deepEqual(classifyJobError(new NovaApiError('PUT /os-services/x', 404, 'gone', null)), {
      kind: 'nova',
      recoverable: true,
    });
    assert.deepEqual(classifyJobError(new KeystoneAuthError('http://k', 'password', 401, 'no')), {
      kind: 'openstack-credentials',
      recoverable: false,
    });
    assert.deepEqual(
      classifyJobError(
        new EndpointUnreachableError('compute', 'http://n', 'GET /', 3, 10, new Error('ECONNREFUSED')),
      ),
      { kind: 'nova-unreachable', recoverable: true },
    );
    assert.deepEqual(classifyJobError(new IncidentNotFoundError('x.1')), {
      kind: 'incident',
      recoverable: false,
    });
    assert.deepEqual(classifyJobError(new Error('boom')), { kind: 'internal', recoverable: true });
  });

  it('backs off exponentially for unreachable peers and flat for devices that answered, within the cap', () => {
    const backoff = backoffByErrorKind(10, 60);
    const unreachable = new FencingError('unreachable', 'x');
    const notConfirmed = new FencingError('not-confirmed', 'x');
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((attempt) => backoff(attempt, 'by-error-kind', unreachable)),
      [10_000, 20_000, 40_000, 60_000, 60_000],
    );
    assert.deepEqual(
      [1, 2, 3].map((attempt) => backoff(attempt, 'by-error-kind', notConfirmed)),
      [10_000, 10_000, 10_000],
    );
  });

  it('merges Prometheus text so each metric name has one HELP/TYPE and all its samples', () => {
    const one = '# HELP m a\n# TYPE m gauge\nm{q="a"} 1\n# HELP n b\n# TYPE n counter\nn{q="a"} 2';
    const two = '# HELP m a\n# TYPE m gauge\nm{q="b"} 3\n# HELP n b\n# TYPE n counter\nn{q="b"} 4';
    assert.equal(
      mergePrometheusText([one, two]),
      '# HELP m a\n# TYPE m gauge\nm{q="a"} 1\nm{q="b"} 3\n# HELP n b\n# TYPE n counter\nn{q="a"} 2\nn{q="b"} 4',
    );
  });
});
