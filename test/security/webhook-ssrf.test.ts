/**
 * Attack: server-side request forgery through webhooks. A fund provider subscribes a URL whose
 * host is (or resolves to) an internal address — loopback, cloud metadata (169.254.169.254),
 * private networks — often disguised in an IPv6 transition form (IPv4-compatible, -mapped,
 * -translated, NAT64, 6to4, Teredo) or behind a DNS name, and the server POSTs to it.
 * Protection: in the production profile only globally routable unicast addresses are accepted,
 * judging embedded IPv4 addresses by their IPv4 rules; literals are refused when the
 * subscription is written, and every address a name resolves to is checked on the very
 * connection that is made (a custom lookup), so DNS rebinding cannot slip past; redirects are
 * never followed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { prefixedId } from '../../src/db/ids.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { generateSigningSecret } from '../../src/webhooks/signing-secret.js';
import { isPublicAddress } from '../../src/webhooks/targets.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { apiRequest } from '../helpers/gateway.js';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/** Internal hosts in IPv6 disguise: loopback and the metadata address spelled as IPv4-compatible, NAT64, 6to4 and translated addresses, and the deprecated site-local range. */
const DISGUISED_URLS = [
  'https://[::127.0.0.1]/',
  'https://[64:ff9b:1::a9fe:a9fe]/',
  'https://[2002:a9fe:a9fe::]/',
  'https://[::ffff:0:a9fe:a9fe]/',
  'https://[fec0::1]/',
];

/**
 * One or two addresses from every range of the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries that is not globally reachable, plus multicast, the deprecated site-local and
 * unallocated IPv6 space, and transition forms that carry such an IPv4 address.
 */
const NOT_PUBLIC = [
  // IPv4
  '0.0.0.0',
  '0.255.255.255',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.255.255.254',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.1',
  '192.0.0.170',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.0.1',
  '192.168.255.255',
  '198.18.0.1',
  '198.19.255.255',
  '198.51.100.1',
  '203.0.113.1',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  // IPv6 proper
  '::',
  '::1',
  '100::1',
  '100:0:0:1::1',
  '2001:2::1',
  '2001:10::1',
  '2001:db8::1',
  '3fff::1',
  '5f00::1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'febf::1',
  'fec0::1',
  'ff02::1',
  'ff0e::1',
  '4000::1',
  '1::1',
  '64:ff9b:1::808:808',
  // IPv4 inside IPv6 transition forms, judged by the IPv4 they carry
  '::127.0.0.1',
  '::a9fe:a9fe',
  '::ffff:127.0.0.1',
  '::ffff:10.1.2.3',
  '::ffff:0:127.0.0.1',
  '::ffff:0:a9fe:a9fe',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::a9fe:a9fe',
  '2002:a9fe:a9fe::',
  '2002:7f00:1::1',
  '2002:c0a8:101:1::1',
  // Teredo: server 65.54.227.120, client 10.0.0.1 (stored inverted), and a private server with a public client
  '2001:0:4136:e378:8000:63bf:f5ff:fffe',
  '2001:0:a00:1:8000:63bf:f7f7:f7f7',
];

/** Globally routable addresses (some in the same transition forms) that stay allowed. */
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '100.63.255.255',
  '172.32.0.1',
  '198.20.0.1',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2002:808:808::1',
  '64:ff9b::808:808',
  '::ffff:8.8.8.8',
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
];

const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address);

let t: TestDatabase;
let orgId: string;
let key: string;
let gateway: OAuthTestServer;

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await addOrganization(t.db, { ein: '98-5551301', name: 'SSRF Fund', kind: 'fund_provider' })).id;
  key = (await createApiKey(t.db, { org: '98-5551301', environment: 'sandbox' })).key;
  gateway = await startOAuthServer(t.db, { demo_data: false, database_url: t.url }, undefined, { behindLoopbackProxy: true });
});
afterEach(async () => {
  await t.db.deleteFrom('webhook_deliveries').execute();
  await t.db.deleteFrom('event_subscriptions').execute();
});
afterAll(async () => {
  await gateway?.close();
  await t?.drop();
});

async function subscribe(url: string) {
  // As the TLS-terminating proxy sends it.
  const response = await apiRequest(gateway, 'sandbox', 'POST', '/v1/event_subscriptions', {
    bearer: key,
    json: { url, category: 'donor_account.created' },
    headers: { 'x-forwarded-proto': 'https' },
  });
  return { status: response.status, type: response.headers.get('content-type'), body: response.body };
}

/** A subscription written straight into the table (as one created before the rules were tightened). */
async function insertSubscription(url: string) {
  await t.db
    .insertInto('event_subscriptions')
    .values({
      id: prefixedId('evtsub'),
      environment: 'sandbox',
      organization_id: orgId,
      url,
      category: 'donor_account.created',
      signing_secret: testBox.seal(generateSigningSecret()),
    })
    .execute();
}

async function emit() {
  await t.db.transaction().execute((trx) =>
    emitEvent(trx, {
      environment: 'sandbox',
      organizationId: orgId,
      category: 'donor_account.created',
      objectId: 'donor_account_ssrf',
      objectType: 'donor_account',
    }),
  );
}

describe('creating a subscription in the production profile', () => {
  it('refuses every internal host in IPv6 disguise with a 400 problem', async () => {
    for (const url of DISGUISED_URLS) {
      const res = await subscribe(url);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 400, detail: 'url must point to a public address in production.' });
    }
    expect(await t.db.selectFrom('event_subscriptions').select('url').execute()).toEqual([]);
  });

  it('refuses a literal from every special-purpose range and disguised spellings, and accepts public ones', async () => {
    const refused = [
      ...NOT_PUBLIC.map((address) => `https://${bracket(address)}/hooks`),
      'https://[::FFFF:7F00:1]/',
      'https://[0:0:0:0:0:ffff:127.0.0.1]/',
      'https://0x7f000001/',
      'https://2130706433/',
      'https://127.1/',
      'https://0/',
      'https://localhost/',
      'https://localhost./',
      'https://LOCALHOST/',
      'https://metadata.localhost/',
      'https://127.0.0.1.:8443/',
    ];
    for (const url of refused) expect((await subscribe(url)).status, url).toBe(400);
    for (const address of PUBLIC) expect((await subscribe(`https://${bracket(address)}/hooks`)).status, address).toBe(201);
    expect((await subscribe('https://hooks.example.org/in')).status).toBe(201);
  });
});

describe('delivering in the production profile', () => {
  it('refuses, on the connection itself, a name that resolves to any non-public address', async () => {
    const answers = new Map<string, string[]>();
    NOT_PUBLIC.forEach((address, i) => answers.set(`n${i}.hooks.example.org`, [address]));
    // One bad address among good ones is enough to refuse the name (rebinding can pick any).
    answers.set('mixed.hooks.example.org', ['8.8.8.8', '2606:4700:4700::1111', '::ffff:0:a9fe:a9fe']);
    for (const name of answers.keys()) await insertSubscription(`https://${name}/hooks`);
    await emit();
    const asked: string[] = [];
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [],
      timeoutMs: 5000,
      profile: 'production',
      concurrency: 100,
      resolve: async (hostname) => {
        asked.push(hostname);
        return (answers.get(hostname) ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      },
    });
    expect(await dispatcher.runOnce()).toBe(answers.size);
    expect(new Set(asked)).toEqual(new Set(answers.keys()));
    const rows = await t.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('event_subscriptions as s', 's.id', 'd.subscription_id')
      .select(['s.url', 'd.status', 'd.last_error'])
      .execute();
    expect(rows).toHaveLength(answers.size);
    for (const row of rows) {
      expect(row.status, row.url).toBe('failed');
      expect(row.last_error, row.url).toMatch(/^refusing to deliver to non-public address /);
    }
  });

  it('refuses a literal that was stored before the rules were tightened, without connecting', async () => {
    for (const url of DISGUISED_URLS) await insertSubscription(url);
    await emit();
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [],
      timeoutMs: 5000,
      profile: 'production',
      resolve: () => Promise.reject(new Error('no lookup expected')),
    });
    expect(await dispatcher.runOnce()).toBe(DISGUISED_URLS.length);
    const rows = await t.db.selectFrom('webhook_deliveries').select(['status', 'last_error']).execute();
    expect(rows).toEqual(DISGUISED_URLS.map(() => ({ status: 'failed', last_error: 'url must point to a public address in production' })));
  });

  it('judges the addresses a lookup returns exactly as literals (unit: the guard alone)', async () => {
    const { guardedLookup } = await import('../../src/webhooks/send.js');
    const lookupOf = (addresses: string[]) =>
      guardedLookup(async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
    const run = (addresses: string[], all: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; result: unknown }>((resolve) => {
        lookupOf(addresses)('hooks.example.org', { all }, (error: NodeJS.ErrnoException | null, address: unknown, family?: number) =>
          resolve({ error, result: all ? address : { address, family } }),
        );
      });
    expect(await run(['8.8.8.8', '2606:4700:4700::1111'], true)).toEqual({
      error: null,
      result: [
        { address: '8.8.8.8', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
    });
    expect(await run(['2606:4700:4700::1111'], false)).toEqual({ error: null, result: { address: '2606:4700:4700::1111', family: 6 } });
    for (const address of NOT_PUBLIC) {
      const { error } = await run(['8.8.8.8', address], true);
      expect(error?.code, address).toBe('EADDRNOTPUBLIC');
    }
    for (const address of NOT_PUBLIC) expect(isPublicAddress(address), address).toBe(false);
    for (const address of PUBLIC) expect(isPublicAddress(address), address).toBe(true);
  });
});

describe('redirects', () => {
  it('are never followed: a 3xx is a failed attempt and the Location is never contacted', async () => {
    const inner = await startReceiver();
    const redirector = http.createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: inner.url }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      await insertSubscription(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/hooks`);
      await emit();
      const dispatcher = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [], timeoutMs: 5000, profile: 'dev' });
      expect(await dispatcher.runOnce()).toBe(1);
      expect(await t.db.selectFrom('webhook_deliveries').select(['status', 'last_status', 'last_error']).executeTakeFirstOrThrow()).toEqual(
        { status: 'failed', last_status: 307, last_error: 'HTTP 307' },
      );
      expect(inner.received).toEqual([]);
    } finally {
      await inner.close();
      await new Promise((resolve) => redirector.close(resolve));
    }
  });
});
