import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestFingerprint } from '../../src/idempotency/fingerprint.js';
import { idempotencyKeyOf } from '../../src/idempotency/key.js';

/** The request fingerprint and the key's rule of docs/api.md, "Idempotency" (pure units). */

/** Reverses the member order of every object, at every depth. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reordered(v)]),
    );
  return value;
}

const json = fc.jsonValue({ maxDepth: 3 });

describe('canonicalJson and requestFingerprint', () => {
  it('is JSON of the same value, whatever the order of its members', () => {
    fc.assert(
      fc.property(json, (value) => {
        const canonical = canonicalJson(value);
        expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reordered(value))).toBe(canonical);
      }),
      { numRuns: 200 },
    );
  });

  it('tells requests apart by body, parameters, query and version', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const request = { version: '2026-04-01', params: {}, query: {}, body: a };
        const same = JSON.stringify(JSON.parse(canonicalJson(a))) === JSON.stringify(JSON.parse(canonicalJson(b)));
        expect(requestFingerprint(request) === requestFingerprint({ ...request, body: b })).toBe(same);
      }),
      { numRuns: 200 },
    );
    const base = { version: '2026-04-01', params: { id: 'a' }, query: {}, body: {} };
    const fingerprints = new Set([
      requestFingerprint(base),
      requestFingerprint({ ...base, version: '2026-01-15' }),
      requestFingerprint({ ...base, params: { id: 'b' } }),
      requestFingerprint({ ...base, query: { id: 'a' } }),
      requestFingerprint({ ...base, body: { id: 'a' } }),
    ]);
    expect(fingerprints.size).toBe(5);
    expect(requestFingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('idempotencyKeyOf', () => {
  it('takes 1 to 255 visible ASCII characters; none sent is no key', () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
    for (const key of ['a', '~'.repeat(255), 'order-42_retry:1', '!"#$%&\'()*+,-./']) expect(idempotencyKeyOf(key)).toBe(key);
  });

  it('refuses anything else with an invalid error naming the header', () => {
    for (const bad of ['', ' ', 'a b', 'x'.repeat(256), 'caf\u00e9', 'tab\t', 'new\nline', '\u007f'])
      expect(() => idempotencyKeyOf(bad), JSON.stringify(bad)).toThrow(/Idempotency-Key header must be 1 to 255 visible ASCII/);
    expect(() => idempotencyKeyOf(['a', 'b'])).toThrow(/Idempotency-Key header must be sent once/);
  });
});
