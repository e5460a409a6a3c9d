import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeOsloBody, OsloRequest } from '@lifeguard/contracts';
import { selectMethod, versionIsCompatible } from '../src/rpc/oslo-dispatcher.ts';
import { readOsloRequest } from '../src/rpc/oslo-request.ts';

const fixtures = join(import.meta.dirname, '../../contracts/test/fixtures/oslo');

/** Every request body captured from real oslo clients (fixtures/oslo). */
function capturedRequests(): Array<Record<string, unknown>> {
  const requests: Array<Record<string, unknown>> = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'body_raw' && typeof value === 'string') {
          const inner = decodeOsloBody(value);
          if ('method' in inner) requests.push(inner);
        } else walk(value);
      }
    }
  };
  for (const file of readdirSync(fixtures).filter((name) => name.endsWith('.json'))) {
    walk(JSON.parse(readFileSync(join(fixtures, file), 'utf8')));
  }
  return requests;
}

describe('reading oslo requests (docs/oslo-messaging.md#message-body, docs/oslo-messaging.md#server-rules)', () => {
  it('reads every captured request exactly as the contracts’ OsloRequest schema does', () => {
    const requests = capturedRequests();
    assert.ok(requests.length >= 15);
    for (const inner of requests) {
      const fast = readOsloRequest(inner);
      assert.ok(fast.success);
      assert.deepEqual(fast.data, OsloRequest.parse(inner));
    }
  });

  it('refuses what the schema refuses, with the schema’s reason', () => {
    const [sample] = capturedRequests();
    for (const broken of [
      { ...sample, method: '' },
      { ...sample, method: 7 },
      { ...sample, args: [] },
      { ...sample, version: 'one' },
      { ...sample, _unique_id: 'not-hex' },
      { ...sample, _msg_id: 'ABC' },
      { ...sample, _timeout: 'soon' },
    ]) {
      const fast = readOsloRequest(broken);
      assert.equal(fast.success, false, JSON.stringify(broken).slice(0, 80));
      assert.equal(OsloRequest.safeParse(broken).success, false);
    }
  });

  it('a request without version or args reads as version 1.0 with no arguments, as oslo defaults them', () => {
    const fast = readOsloRequest({ method: 'update_device_up' });
    assert.ok(fast.success);
    assert.deepEqual([fast.data.version, fast.data.args], ['1.0', {}]);
  });

  it('version compatibility follows oslo: same major, minor not greater, revision on equal minor', () => {
    assert.equal(versionIsCompatible('1.9', '1.9'), true);
    assert.equal(versionIsCompatible('1.9', '1.5'), true);
    assert.equal(versionIsCompatible('1.9', '1.10'), false);
    assert.equal(versionIsCompatible('1.10', '1.9'), true);
    assert.equal(versionIsCompatible('1.9', '2.0'), false);
    assert.equal(versionIsCompatible('1.9', '1.9.1'), false);
    assert.equal(versionIsCompatible('1.9.2', '1.9.1'), true);
  });

  it('dispatch answers NoSuchMethod when an endpoint qualified and UnsupportedVersion when none did', () => {
    const endpoint = { name: 'E', version: '1.4', namespace: null, methods: new Map() };
    const noMethod = selectMethod([endpoint], 'x', '1.0', null);
    const noVersion = selectMethod([endpoint], 'x', '1.5', null);
    const noNamespace = selectMethod([endpoint], 'x', '1.0', 'other');
    assert.ok('failure' in noMethod && noMethod.failure.class === 'NoSuchMethod');
    assert.ok('failure' in noVersion && noVersion.failure.class === 'UnsupportedVersion');
    assert.ok('failure' in noNamespace && noNamespace.failure.class === 'UnsupportedVersion');
  });
});
