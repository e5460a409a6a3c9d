import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { COMPUTE_SERVICE_FIELDS, ComputeService, isComputeServiceRecord } from '../src/compute/resources.ts';

// What NovaClient.listServices validates a 2.53+ listing with: ComputeService with a text `id`.
const TextIdService = ComputeService.extend({ id: z.string() });

const valid = {
  id: 'b7e1',
  binary: 'nova-compute',
  host: 'compute-0',
  zone: 'nova',
  status: 'enabled',
  state: 'up',
  updated_at: '2026-11-30T08:00:00.000000',
  disabled_reason: null,
  forced_down: false,
};

/** Records around the schema's edges: each field absent, null, of the wrong type; extra fields. */
function variants(): unknown[] {
  const records: unknown[] = [valid, { ...valid, later_microversion_field: { nested: [1] } }];
  const values: unknown[] = [undefined, null, 'text', '', 7, true, false, {}, []];
  for (const field of COMPUTE_SERVICE_FIELDS) {
    const { [field]: _left, ...without } = valid;
    records.push(without);
    for (const value of values) records.push({ ...valid, [field]: value });
  }
  records.push(null, 'service', 7, [], [valid]);
  records.push(JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`));
  return records;
}

describe('isComputeServiceRecord (the listing taken without a copy)', () => {
  it('checks exactly the fields of ComputeService', () => {
    assert.deepEqual([...COMPUTE_SERVICE_FIELDS], Object.keys(ComputeService.shape));
  });

  it('accepts a record only when the schema does, and the schema then gives back an equal record', () => {
    const records = variants();
    let accepted = 0;
    for (const record of records) {
      const parsed = TextIdService.safeParse(record);
      if (isComputeServiceRecord(record)) {
        accepted++;
        assert.ok(parsed.success, `the schema refuses ${JSON.stringify(record)}`);
        assert.deepEqual(parsed.data, record);
      }
    }
    // every variant the schema takes without change is taken (absent optional fields, null where nullable)
    const takenBySchema = records.filter((record) => {
      const parsed = TextIdService.safeParse(record);
      return parsed.success && !Object.hasOwn(record as object, '__proto__');
    });
    assert.equal(accepted, takenBySchema.length);
    assert.ok(accepted >= 10, `only ${accepted} variants accepted`);
  });

  it('leaves a record with its own __proto__ key to the schema, which does not copy that key', () => {
    const record = JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`);
    assert.equal(isComputeServiceRecord(record), false);
    const parsed = TextIdService.parse(record);
    assert.equal(Object.hasOwn(parsed, '__proto__'), false);
  });
});
