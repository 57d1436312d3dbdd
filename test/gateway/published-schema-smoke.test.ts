import { describe, expect, it } from 'vitest';
import { validatePublished } from '../helpers/published-openapi.js';

describe('published schema validator', () => {
  it('accepts a conforming donation list and rejects a broken one', () => {
    const good = { results: [{ id: 'donation_1', payment_source_id: 'ps', amount_gross: 100, amount_net: 90, amount_fee: 10, currency: 'USD', purpose: 'x', note: '', created_at: '2026-01-01T00:00:00.000Z', canceled_at: null }] };
    expect(validatePublished('2026-04-01', '/v1/donations', 'get', 200, good)).toEqual([]);
    const bad = { results: [{ id: 'donation_1', amount_gross: '100' }] };
    expect(validatePublished('2026-04-01', '/v1/donations', 'get', 200, bad).length).toBeGreaterThan(0);
    expect(validatePublished('2026-04-01', '/v1/donations', 'get', 401, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'x' })).toEqual([]);
    expect(validatePublished('2026-04-01', '/v1/donations', 'get', 401, { type: 'about:blank', title: 'Unauthorized', status: 401 })).not.toEqual([]);
  });
});
