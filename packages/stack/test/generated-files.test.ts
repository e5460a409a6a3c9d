import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeGeneratedFile } from '../src/stack-files.ts';

describe("npm start's generated config.yaml", () => {
  const path = () => join(mkdtempSync(join(tmpdir(), 'generated-')), 'config.yaml');

  it('is written when absent, and written again when nobody edited it', () => {
    const file = path();
    assert.equal(writeGeneratedFile(file, 'config:\n  POLL: 5\n'), 'written');
    assert.equal(writeGeneratedFile(file, 'config:\n  POLL: 6\n'), 'written');
    assert.equal(readFileSync(file, 'utf8'), 'config:\n  POLL: 6\n');
  });

  it('is kept as a person edited it, never written over silently (regression)', () => {
    const file = path();
    writeGeneratedFile(file, 'config:\n  POLL: 5\n');
    writeFileSync(file, 'config:\n  POLL: 5\n  THRESHOLD: 30\n');
    assert.equal(writeGeneratedFile(file, 'config:\n  POLL: 5\n'), 'kept');
    assert.equal(readFileSync(file, 'utf8'), 'config:\n  POLL: 5\n  THRESHOLD: 30\n');
  });

  it('is written over when an older launcher wrote it (no record of what was generated)', () => {
    const file = path();
    writeFileSync(file, 'config:\n  POLL: 9\n');
    assert.equal(writeGeneratedFile(file, 'config:\n  POLL: 5\n'), 'written');
  });
});
