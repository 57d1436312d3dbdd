/**
 * Attack: wrong client secrets sent to the token endpoints from many addresses, so that argon2
 * (about 19 MiB and tens of milliseconds each) keeps running: from every address of one IPv6
 * /64 (a subscriber holds the whole /64), from many /64s, or from enough of them to flush the
 * failure records.
 * Protection: failures are counted per client and caller address, IPv6 by its /64 (the sign-in
 * throttle's addressKey), and per client across all addresses; past either limit argon2 does
 * not run. Each check is reserved synchronously before argon2 starts, so concurrent requests
 * cannot all pass the limit. The records are a bounded LRU, so a flood evicts the oldest, never
 * everything (the eviction order itself: test/oidc/client-secret-cache.test.ts), and the
 * per-client ceilings live apart from the per-address records, so no churn of addresses evicts
 * them. A secret verified recently is answered from the cache, and an address (/64) that
 * presented the right secret recently is still checked past the per-client ceiling, so the
 * client keeps working (src/oidc/client-secret-cache.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import { basic, endpoints } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { clientSecretFailuresPerCallerAddress, clientSecretFailuresPerClient } from '../../src/limits/rate-limits.js';

const production = { environment: 'production' } as const;
const { server, clients } = useOAuthServer({
  staff: 0,
  behindLoopbackProxy: true,
  clients: { sameNet: production, manyNets: production, busy: production, victim: production, flooder: production },
  // Fewer records than the default 10,000, so flooding past them takes a few hundred requests.
  runtime: { clientSecretRecords: 500 },
});

/** An introspection request as the trusted loopback proxy forwards it for `from`: 200 with the right secret, 401 otherwise. */
async function introspect(client: { client_id: string }, secret: string, from: string): Promise<number> {
  const response = await fetch(`${endpoints(server, 'production').api}/auth/oauth/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(client.client_id, secret),
      'x-forwarded-for': from,
      'x-forwarded-proto': 'https',
    },
    body: new URLSearchParams({ token: 'x'.repeat(43) }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** `perAddress` wrong secrets from each address, all at once. */
async function flood(client: { client_id: string }, addresses: string[], perAddress: number): Promise<number[]> {
  return Promise.all(
    addresses.flatMap((from, a) => Array.from({ length: perAddress }, (_, i) => introspect(client, `wrong-${a}-${i}`, from))),
  );
}

const cache = () => server.runtime.oidc.secretCache;

describe('a flood of wrong client secrets from many addresses', () => {
  it('from 12 addresses of one /64 runs argon2 only up to the per-address limit', async () => {
    const client = clients.sameNet;
    const net = Array.from({ length: 12 }, (_, i) => (i % 2 ? `2001:db8:5:6::${i + 1}` : `2001:db8:5:6:${(i + 1).toString(16)}:ffff:0:1`));
    const before = cache().argon2Runs;
    const statuses = await flood(client, net, 12);
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerCallerAddress.max);
    // Another address of the same /64 is limited too, even with the right secret (not even checked) ...
    expect(await introspect(client, client.client_secret, '2001:db8:5:6:abcd::99')).toBe(401);
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerCallerAddress.max);
    // ... while the next /64 is not.
    expect(await introspect(client, client.client_secret, '2001:db8:5:7::1')).toBe(200);
  });

  it('from many /64s runs argon2 only up to the per-client ceiling', async () => {
    const client = clients.manyNets;
    const nets = Array.from({ length: 20 }, (_, i) => `2001:db8:7:${i.toString(16)}::1`);
    const before = cache().argon2Runs;
    const statuses = await flood(client, nets, clientSecretFailuresPerCallerAddress.max);
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max);
    // A /64 that never failed, and never presented the right secret, is not checked either.
    expect(await introspect(client, client.client_secret, '2001:db8:8::1')).toBe(401);
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max);
  });

  it('leaves the right secret working throughout: cached, and checked again from an address that used it', async () => {
    const client = clients.busy;
    const home = '2001:db8:100:1::10';
    expect(await introspect(client, client.client_secret, home)).toBe(200);
    const before = cache().argon2Runs;
    const nets = Array.from({ length: 20 }, (_, i) => `2001:db8:9:${i.toString(16)}::1`);
    const [wrong, right] = await Promise.all([
      flood(client, nets, clientSecretFailuresPerCallerAddress.max),
      Promise.all(Array.from({ length: 50 }, () => introspect(client, client.client_secret, home))),
    ]);
    expect(new Set(wrong)).toEqual(new Set([401]));
    expect(new Set(right)).toEqual(new Set([200]));
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max);
    // The cached success ends (its TTL) while the flood's failures still count: a /64 the
    // client never used is refused unchecked; its own /64 is checked again and passes.
    cache().clear();
    expect(await introspect(client, client.client_secret, '2001:db8:100:2::10')).toBe(401);
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max);
    expect(await introspect(client, client.client_secret, '2001:db8:100:1::11')).toBe(200);
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max + 1);
  });

  // 10,200 requests through a real server: 22-29 s on a quiet host and over a minute on a
  // loaded one, so it gets more than the suite's 30 s default; what it asserts is counts, not speed.
  it('keeps a client limited through a flood of more addresses than the records hold', { timeout: 180_000 }, async () => {
    // The counts are those of one failure window (a minute): the clock the limits read stands
    // still, so a flood that outlasts the window on a loaded host does not open a second one.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const { victim, flooder } = clients;
    // The victim's per-client ceiling is reached from many /64s.
    const victimNets = Array.from({ length: 10 }, (_, i) => `2001:db8:a:${i.toString(16)}::1`);
    await flood(victim, victimNets, clientSecretFailuresPerCallerAddress.max);
    const before = cache().argon2Runs;
    // Then more distinct /64s than the failure records can hold, each with one wrong secret for
    // another client: past that client's ceiling none runs argon2, but each writes a record.
    const records = cache().maxEntries;
    expect(records).toBe(500);
    const batch = 100;
    for (let start = 0; start < records + batch; start += batch) {
      const nets = Array.from(
        { length: batch },
        (_, i) => `2001:db8:${(0x1000 + Math.floor((start + i) / 0x10000)).toString(16)}:${((start + i) % 0x10000).toString(16)}::1`,
      );
      await flood(flooder, nets, 1);
    }
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max);
    // The flood evicted old per-address records, but not the victim's ceiling: a fresh /64
    // with a wrong secret is still refused unchecked.
    expect(await introspect(victim, 'still-wrong', '2001:db8:b::1')).toBe(401);
    expect(cache().argon2Runs - before).toBe(clientSecretFailuresPerClient.max);
    vi.useRealTimers();
  });
});
