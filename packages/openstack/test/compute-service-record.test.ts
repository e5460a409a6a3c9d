import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { ComputeService, servicesAsListed } from '../src/compute/resources.ts';

// The record schema of ComputeServiceListing, run by zod's own parser: ComputeService with a text `id`.
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

/** Records around the schema's edges: each field absent, null, of every JSON type; extra fields. */
function variants(): unknown[] {
  const records: unknown[] = [valid, { ...valid, later_microversion_field: { nested: [1] } }];
  const values: unknown[] = [undefined, null, 'text', '', 7, 7.5, true, false, {}, []];
  for (const field of Object.keys(ComputeService.shape)) {
    const { [field as keyof typeof valid]: _left, ...without } = valid;
    records.push(without);
    for (const value of values) records.push({ ...valid, [field]: value });
  }
  records.push(null, 'service', 7, [], [valid]);
  return records;
}

describe('servicesAsListed (a listing validated by zod without a copy)', () => {
  it("takes a listing exactly when zod's parser takes each of its records, and then as it came", () => {
    let accepted = 0;
    for (const record of variants()) {
      const body = { services: [valid, record] };
      const parsed = TextIdService.safeParse(record);
      const listed = servicesAsListed(body);
      assert.equal(listed !== null, parsed.success, `the two disagree on ${JSON.stringify(record)}`);
      if (listed === null || !parsed.success) continue;
      accepted++;
      assert.equal(listed, body.services, 'the same array');
      assert.equal(listed[1], record, 'the same record');
      assert.deepEqual(parsed.data, record, "the schema's output is its input");
    }
    // absent optional fields, null where nullable, text where text is due, extra fields
    assert.ok(accepted >= 12, `only ${accepted} variants accepted`);
  });

  it('refuses a body that is not a listing', () => {
    for (const body of [null, 'services', [], {}, { services: null }, { services: { id: 'x' } }])
      assert.equal(servicesAsListed(body), null, JSON.stringify(body));
    assert.deepEqual(servicesAsListed({ services: [] }), []);
  });

  it('refuses a whole listing for one record that does not fit, wherever it is', () => {
    const services = Array.from({ length: 1000 }, (_, index) => ({ ...valid, id: `id-${index}` }));
    assert.equal(servicesAsListed({ services }), services);
    for (const at of [0, 500, 999]) {
      const spoiled = services.map((service, index) => (index === at ? { ...service, id: index } : service));
      assert.equal(servicesAsListed({ services: spoiled }), null, `a number id at ${at}`);
    }
  });

  it('keeps a key named __proto__ as an own property of its record, changing no prototype', () => {
    const record = JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`);
    const [listed] = servicesAsListed({ services: [record] }) ?? [];
    assert.equal(listed, record);
    assert.equal(Object.getPrototypeOf(listed), Object.prototype);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });
});
