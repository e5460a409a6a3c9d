import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '@lifeguard/testing';
import { type ContractTarget, expectStatus, type RawAnswer } from './support/contract-target.ts';

/** Nova's fault body `{"<name>": {"code": <status>, "message": ...}}`: its message, checked against the status. */
function faultMessage(answer: RawAnswer, status: number): string {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  const [fault] = Object.values(answer.body as Record<string, { code: number; message: string }>);
  assert.equal(fault?.code, status);
  return fault?.message ?? '';
}

const KEY_PATTERN = "'^[a-zA-Z0-9-_:. ]{1,255}$'";

/**
 * Nova's server metadata API (api-ref "Server metadata"), run unchanged against real Nova and against
 * cloud-sim: status codes, bodies, 404s, 400s in Nova's words, the key and value limits (255
 * characters), the quota of 128 items, 409 in a state Nova refuses, and the metadata in server show
 * and detail. The suite boots one server of its own and deletes it.
 */
export function serverMetadataContract(createTarget: () => Promise<ContractTarget>): void {
  describe('server metadata contract', { timeout: 120_000 }, () => {
    let target: ContractTarget;
    let id: string;
    const path = () => `/servers/${id}/metadata`;

    before(async () => {
      target = await createTarget();
      const booted = await target.nova('POST', '/servers', {
        server: {
          name: `metadata-${randomUUID().slice(0, 6)}`,
          imageRef: target.imageId,
          flavorRef: target.flavorId,
          networks: 'none',
          host: target.hosts[0],
        },
      });
      id = (expectStatus(booted, 202).body as { server: { id: string } }).server.id;
      await waitFor(
        'the metadata server ACTIVE',
        async () => {
          const shown = (await target.nova('GET', `/servers/${id}`)).body as { server: { status: string } };
          assert.notEqual(shown.server.status, 'ERROR');
          return shown.server.status === 'ACTIVE';
        },
        60_000,
        250,
      );
    });

    after(async () => {
      if (!target) return;
      if (id) await target.nova('DELETE', `/servers/${id}`);
      await target.close();
    });

    it('GET lists a server booted without metadata as {}', async () => {
      assert.deepEqual(expectStatus(await target.nova('GET', path()), 200).body, { metadata: {} });
    });

    it('POST creates or updates items, keeps the others, and answers 200 with the whole set, shown by server show and detail', async () => {
      const first = await target.nova('POST', path(), { metadata: { HA_Enabled: 'True', role: 'db' } });
      assert.deepEqual(expectStatus(first, 200).body, { metadata: { HA_Enabled: 'True', role: 'db' } });
      const second = await target.nova('POST', path(), { metadata: { role: 'web' } });
      assert.deepEqual(expectStatus(second, 200).body, { metadata: { HA_Enabled: 'True', role: 'web' } });
      const shown = (await target.nova('GET', `/servers/${id}`)).body as { server: { metadata: unknown } };
      assert.deepEqual(shown.server.metadata, { HA_Enabled: 'True', role: 'web' });
      const detail = (await target.nova('GET', `/servers/detail?all_tenants=1&host=${target.hosts[0]}`))
        .body as { servers: Array<{ id: string; metadata: unknown }> };
      assert.deepEqual(detail.servers.find((server) => server.id === id)?.metadata, {
        HA_Enabled: 'True',
        role: 'web',
      });
    });

    it('PUT replaces the whole set and answers 200 with it', async () => {
      const answer = await target.nova('PUT', path(), { metadata: { HA_Enabled: 'False', zone: 'a' } });
      assert.deepEqual(expectStatus(answer, 200).body, { metadata: { HA_Enabled: 'False', zone: 'a' } });
      assert.deepEqual((await target.nova('GET', path())).body, {
        metadata: { HA_Enabled: 'False', zone: 'a' },
      });
    });

    it('GET of one key answers {"meta": {key: value}}, 404 for a key the server does not have', async () => {
      assert.deepEqual(expectStatus(await target.nova('GET', `${path()}/zone`), 200).body, {
        meta: { zone: 'a' },
      });
      assert.equal(
        faultMessage(await target.nova('GET', `${path()}/absent`), 404),
        'Metadata item was not found',
      );
    });

    it('PUT of one key creates or replaces that item alone and answers 200 with it; a body naming another key is 400', async () => {
      const answer = await target.nova('PUT', `${path()}/HA_Enabled`, { meta: { HA_Enabled: 'True' } });
      assert.deepEqual(expectStatus(answer, 200).body, { meta: { HA_Enabled: 'True' } });
      assert.deepEqual((await target.nova('GET', path())).body, {
        metadata: { HA_Enabled: 'True', zone: 'a' },
      });
      const mismatch = await target.nova('PUT', `${path()}/zone`, { meta: { other: 'b' } });
      assert.equal(faultMessage(mismatch, 400), 'Request body and URI mismatch');
      const two = await target.nova('PUT', `${path()}/zone`, { meta: { zone: 'b', other: 'c' } });
      assert.match(
        faultMessage(two, 400),
        /^Invalid input for field\/attribute meta\. .* has too many properties$/,
      );
      const none = await target.nova('PUT', `${path()}/zone`, { meta: {} });
      assert.equal(
        faultMessage(none, 400),
        'Invalid input for field/attribute meta. Value: {}. {} does not have enough properties',
      );
    });

    it('DELETE of one key answers 204 with no body, then 404 for it', async () => {
      const answer = await target.nova('DELETE', `${path()}/zone`);
      assert.equal(answer.status, 204);
      assert.equal(answer.body, null);
      assert.deepEqual((await target.nova('GET', path())).body, { metadata: { HA_Enabled: 'True' } });
      assert.equal(
        faultMessage(await target.nova('DELETE', `${path()}/zone`), 404),
        'Metadata item was not found',
      );
    });

    it('answers 404 naming the server for a server that does not exist, on every route', async () => {
      const absent = randomUUID();
      const message = `Instance ${absent} could not be found.`;
      const base = `/servers/${absent}/metadata`;
      const calls: Array<[string, string, unknown]> = [
        ['GET', base, undefined],
        ['POST', base, { metadata: { a: 'b' } }],
        ['PUT', base, { metadata: { a: 'b' } }],
        ['GET', `${base}/a`, undefined],
        ['PUT', `${base}/a`, { meta: { a: 'b' } }],
        ['DELETE', `${base}/a`, undefined],
      ];
      for (const [method, url, body] of calls)
        assert.equal(faultMessage(await target.nova(method, url, body), 404), message, `${method} ${url}`);
    });

    it('refuses bad bodies with 400 in Nova’s words, before it looks for the server, and changes nothing', async () => {
      const long = 'x'.repeat(256);
      const cases: Array<[body: unknown, message: string]> = [
        [{}, "'metadata' is a required property"],
        [{ metadata: {}, extra: 1 }, "Additional properties are not allowed ('extra' was unexpected)"],
        [
          { metadata: ['a'] },
          "Invalid input for field/attribute metadata. Value: ['a']. ['a'] is not of type 'object'",
        ],
        [{ metadata: { a: 1 } }, "Invalid input for field/attribute a. Value: 1. 1 is not of type 'string'"],
        [
          { metadata: { a: null } },
          "Invalid input for field/attribute a. Value: None. None is not of type 'string'",
        ],
        [
          { metadata: { a: long } },
          `Invalid input for field/attribute a. Value: ${long}. '${long}' is too long`,
        ],
        [
          { metadata: { 'bad!': 'b' } },
          `Invalid input for field/attribute metadata. Value: {'bad!': 'b'}. 'bad!' does not match any of the regexes: ${KEY_PATTERN}`,
        ],
        [
          { metadata: { '': 'b' } },
          `Invalid input for field/attribute metadata. Value: {'': 'b'}. '' does not match any of the regexes: ${KEY_PATTERN}`,
        ],
        [
          { metadata: { [long]: 'b' } },
          `Invalid input for field/attribute metadata. Value: {'${long}': 'b'}. '${long}' does not match any of the regexes: ${KEY_PATTERN}`,
        ],
      ];
      for (const [body, message] of cases) {
        assert.equal(
          faultMessage(await target.nova('POST', path(), body), 400),
          message,
          JSON.stringify(body),
        );
        const elsewhere = await target.nova('PUT', `/servers/${randomUUID()}/metadata`, body);
        assert.equal(faultMessage(elsewhere, 400), message, 'checked before the server is looked up');
      }
      assert.deepEqual((await target.nova('GET', path())).body, { metadata: { HA_Enabled: 'True' } });
    });

    it('takes keys and values of 255 characters, the longest Nova allows', async () => {
      const key = 'k'.repeat(255);
      const value = 'v'.repeat(255);
      const answer = await target.nova('PUT', `${path()}/${key}`, { meta: { [key]: value } });
      assert.deepEqual(expectStatus(answer, 200).body, { meta: { [key]: value } });
      expectStatus(await target.nova('DELETE', `${path()}/${key}`), 204);
    });

    it('refuses more than 128 items with 403 and changes nothing', async () => {
      const items = Object.fromEntries(Array.from({ length: 128 }, (_, index) => [`item-${index}`, 'x']));
      assert.equal(
        faultMessage(await target.nova('POST', path(), { metadata: items }), 403),
        'Maximum number of metadata items exceeds 128',
      );
      assert.deepEqual((await target.nova('GET', path())).body, { metadata: { HA_Enabled: 'True' } });
      const replaced = await target.nova('PUT', path(), { metadata: items });
      assert.equal(
        Object.keys((expectStatus(replaced, 200).body as { metadata: object }).metadata).length,
        128,
      );
      expectStatus(await target.nova('PUT', path(), { metadata: { HA_Enabled: 'True' } }), 200);
    });

    it('refuses a change while the server is in ERROR with 409 naming the action and the state', async () => {
      expectStatus(
        await target.nova('POST', `/servers/${id}/action`, { 'os-resetState': { state: 'error' } }),
        202,
      );
      try {
        assert.equal(
          faultMessage(await target.nova('POST', path(), { metadata: { a: 'b' } }), 409),
          `Cannot 'update metadata' instance ${id} while it is in vm_state error`,
        );
        assert.equal(
          faultMessage(await target.nova('DELETE', `${path()}/HA_Enabled`), 409),
          `Cannot 'delete metadata' instance ${id} while it is in vm_state error`,
        );
        assert.deepEqual(expectStatus(await target.nova('GET', path()), 200).body, {
          metadata: { HA_Enabled: 'True' },
        });
      } finally {
        await target.nova('POST', `/servers/${id}/action`, { 'os-resetState': { state: 'active' } });
      }
    });
  });
}
