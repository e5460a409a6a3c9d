import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CapturedLines } from '@lifeguard/testing';
import { z } from 'zod';
import {
  ConfigError,
  createLogger,
  loadRuntimeConfig,
  parseConfig,
  readYamlMapping,
  redactUrl,
} from '../src/index.ts';

describe('configuration', () => {
  it('reads defaults when nothing is set', () => {
    const config = loadRuntimeConfig({ httpPort: 9400 }, [{ name: 'environment', values: {} }]);
    assert.equal(config.LIFEGUARD_HTTP_PORT, 9400);
    assert.equal(config.LIFEGUARD_AMQP_URL, 'amqp://guest:guest@127.0.0.1:5672/');
  });

  it('an invalid value stops start-up with an error naming the key, the source and the problem', () => {
    assert.throws(
      () =>
        loadRuntimeConfig({ httpPort: 9400 }, [
          { name: 'environment', values: { LIFEGUARD_HTTP_PORT: '70000' } },
        ]),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /LIFEGUARD_HTTP_PORT \(environment\): Too big.*65535; got "70000"/);
        return true;
      },
    );
  });

  it('names every bad key at once, and masks secrets and URL passwords in the message', () => {
    const schema = z.object({ DB_PASSWORD: z.string().min(12), AMQP: z.url({ protocol: /^amqp$/ }) });
    assert.throws(
      () =>
        parseConfig(schema, [
          { name: '/etc/lifeguard/app.yaml', values: { DB_PASSWORD: 'hunter2', AMQP: 'http://u:s3cret@x/' } },
        ]),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 2);
        assert.match(error.message, /DB_PASSWORD \(\/etc\/lifeguard\/app.yaml\)/);
        assert.match(error.message, /AMQP \(\/etc\/lifeguard\/app.yaml\)/);
        assert.doesNotMatch(error.message, /hunter2|s3cret/);
        return true;
      },
    );
  });

  it('later sources override earlier ones key by key', () => {
    const schema = z.object({ A: z.string(), B: z.string() });
    const parsed = parseConfig(schema, [
      { name: 'file', values: { A: 'from-file', B: 'from-file' } },
      { name: 'environment', values: { B: 'from-env' } },
    ]);
    assert.deepEqual(parsed, { A: 'from-file', B: 'from-env' });
  });

  it('a YAML syntax error names the file and the position', () => {
    const directory = mkdtempSync(join(tmpdir(), 'lifeguard-config-'));
    const path = join(directory, 'config.yaml');
    writeFileSync(path, 'config:\n  POLL: [unclosed\n');
    assert.throws(
      () => readYamlMapping(path),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(
          error.message,
          new RegExp(`^invalid configuration: ${path.replace(/[/.]/g, '\\$&')}: not valid YAML`),
        );
        assert.doesNotMatch(error.message, /\(file\)/, 'no placeholder for the key');
        return true;
      },
    );
    assert.equal(readYamlMapping(join(directory, 'missing.yaml'), { required: false }), null);
    assert.throws(() => readYamlMapping(join(directory, 'missing.yaml')), /cannot read file: ENOENT/);
  });

  it('a file named by a setting is reported under that setting, for every problem with the whole file', () => {
    const directory = mkdtempSync(join(tmpdir(), 'lifeguard-config-'));
    const missing = join(directory, 'none.yaml');
    assert.throws(
      () => readYamlMapping(missing, { pointedBy: 'FENCING_CONFIG_PATH' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          `invalid configuration: FENCING_CONFIG_PATH (${missing}): cannot read file: ENOENT (no such file)`,
        );
        assert.equal(error.problems[0]!.key, 'FENCING_CONFIG_PATH');
        return true;
      },
    );
    assert.throws(
      () => readYamlMapping(directory, { pointedBy: 'FENCING_CONFIG_PATH' }),
      /invalid configuration: FENCING_CONFIG_PATH \(.*\): cannot read file: EISDIR \(a directory, not a file\)$/,
    );
    const broken = join(directory, 'broken.yaml');
    writeFileSync(broken, 'a: [unclosed\n');
    assert.throws(
      () => readYamlMapping(broken, { pointedBy: 'INSTANCEHA_CONFIG_PATH' }),
      /invalid configuration: INSTANCEHA_CONFIG_PATH \(.*broken\.yaml\): not valid YAML/,
    );
    const list = join(directory, 'list.yaml');
    writeFileSync(list, '- a\n');
    assert.throws(
      () => readYamlMapping(list, { pointedBy: 'OS_CLIENT_CONFIG_FILE' }),
      /invalid configuration: OS_CLIENT_CONFIG_FILE \(.*list\.yaml\): the top level must be a mapping$/,
    );
  });
});

describe('logging', () => {
  it('a password from the configuration never reaches a log line', () => {
    const lines = new CapturedLines();
    const logger = createLogger({ service: 'test', destination: lines });
    const fencing = { host: 'compute-1', ipaddr: '192.0.2.10', login: 'admin', passwd: 'bmc-Secret-1' };
    const cloud = { auth: { username: 'admin', password: 'keystone-Secret-2' }, token: 'gAAAAA-token-3' };
    logger.info({ fencing, cloud, headers: { authorization: 'Basic YWRtaW46c2VjcmV0' } }, 'loaded');
    logger.info({ nested: { deeper: { password: 'deep-Secret-4' } } }, 'nested');
    logger.info({ url: redactUrl('amqp://guest:amqp-Secret-5@rabbit:5672/') }, 'url');
    for (const secret of [
      'bmc-Secret-1',
      'keystone-Secret-2',
      'gAAAAA-token-3',
      'YWRtaW46c2VjcmV0',
      'deep-Secret-4',
      'amqp-Secret-5',
    ]) {
      assert.ok(!lines.text.includes(secret), `${secret} leaked: ${lines.text}`);
    }
    assert.match(lines.text, /\[REDACTED\]/);
    assert.match(lines.text, /"login":"admin"/, 'non-secret fields are kept');
  });
});
