import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { apiGet, apiRequest } from '../helpers/gateway.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

const { testDatabase: t, server, staff: nonprofit } = useOAuthServer({ config: { webhook_poll_ms: 100 } });
let key: string;
let otherKey: string;
const FUND_EIN = '98-1234567';

beforeAll(async () => {
  await addOrganization(t.db, { ein: FUND_EIN, name: 'Acme Giving Fund', kind: 'fund_provider' });
  await addOrganization(t.db, { ein: '98-7654000', name: 'Other Fund', kind: 'fund_provider' });
  key = (await createApiKey(t.db, { org: FUND_EIN, environment: 'sandbox' })).key;
  otherKey = (await createApiKey(t.db, { org: '98-7654000', environment: 'sandbox' })).key;
});

function call(method: string, path: string, body?: unknown, bearer = key, headers: Record<string, string> = {}) {
  return apiRequest(server, 'sandbox', method, path, { bearer, json: body, headers });
}

/** The admin CLI in process, as an operator runs it: the server's database and secrets key (codes are hashed under a sealed key). */
async function admin(...argv: string[]) {
  const { code, stdout, stderr } = await runAdmin([...argv, '--json'], { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY });
  return { code, json: (stdout ? JSON.parse(stdout) : {}) as Record<string, unknown>, stderr };
}

describe('provider-initiated setup', () => {
  it('creates a donor account and a token in advance; the donor redeems the code and the account is approved', async () => {
    const created = await call('POST', '/v1/donor_accounts', {
      donor: { email: 'Warren@Example.com', first_name: 'Warren' },
      external_id: 'DONOR-1',
      metadata: { tier: 'gold' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'pending',
      donor: { email: 'warren@example.com', first_name: 'Warren', last_name: null },
      external_id: 'DONOR-1',
      approval: null,
      disabled: false,
    });
    expect(created.headers.get('location')).toBe(`/v1/donor_accounts/${created.body.id as string}`);
    const id = created.body.id as string;
    expect(id).toMatch(/^donor_account_[0-9a-z]{26}$/);

    const token = await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, { expires_in: 3600 });
    expect(token.status).toBe(201);
    const code = token.body.code as string;
    expect(code).toMatch(/^[A-Z0-9]{12}$/);
    expect(new Date(token.body.expires_at as string).getTime() - new Date(token.body.created_at as string).getTime()).toBe(3_600_000);
    const fetched = await call('GET', `/v1/authorization_tokens/${token.body.id as string}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.code).toBeUndefined();
    const listed = await call('GET', `/v1/donor_accounts/${id}/authorization_tokens`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(code);
    expect(JSON.stringify(await t.db.selectFrom('donor_authorization_tokens').selectAll().execute())).not.toContain(code);

    const redeemed = await admin(
      'daf',
      'redeem-code',
      '--environment',
      'sandbox',
      '--email',
      'warren@example.com',
      '--code',
      code.toLowerCase().replace(/(....)/g, '$1-'),
    );
    expect(redeemed.code).toBe(0);
    expect(redeemed.json).toMatchObject({ id, status: 'approved', approval: { approved_by: 'system:authorization_token' } });
    const after = await call('GET', `/v1/donor_accounts/${id}`);
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('approved');
    expect((await call('GET', `/v1/authorization_tokens/${token.body.id as string}`)).body.status).toBe('verified');
    // Single use.
    expect((await call('POST', '/v1/authorization_tokens/verify', { code })).status).toBe(404);
  });
});

describe('donor-initiated verification', () => {
  it("e-mails a code on the donor's grant request; the provider verifies it and the request can be submitted", async () => {
    const submitted = await admin(
      'daf',
      'submit-grant-request',
      '--fund-provider',
      FUND_EIN,
      '--environment',
      'sandbox',
      '--email',
      'ada@example.org',
      '--ein',
      nonprofit.ein,
      '--amount-cents',
      '25000',
      '--giving-pool',
      'Lovelace Family Fund',
      '--purpose',
      'Where needed most',
    );
    expect(submitted.code).toBe(0);
    expect(submitted.json.emailed).toBe(true);
    expect(submitted.json.mail_via).toBe('dev_table');
    const mail = await admin('mail', 'list', '--to', 'ada@example.org');
    const message = (mail.json.mail as { body: string; subject: string }[])[0]!;
    expect(message.subject).toMatch(/Acme Giving Fund/);
    const code = /code: ([A-Z0-9]{12})/.exec(message.body)![1]!;

    const requestId = submitted.json.grant_request_id as string;
    const waiting = await call('GET', `/v1/grant_requests/${requestId}`);
    expect(waiting.status).toBe(200);
    expect(waiting.body).toMatchObject({
      status: 'awaiting_account_decision',
      amount_cents: 25000,
      ein: `${nonprofit.ein.slice(0, 2)}-${nonprofit.ein.slice(2)}`,
    });
    expect((await call('POST', `/v1/grant_requests/${requestId}/submit`, {})).status).toBe(412);

    const verified = await call('POST', '/v1/authorization_tokens/verify', {
      code: ` ${code.slice(0, 6).toLowerCase()}-${code.slice(6)} `,
      external_id: 'ADA-7',
    });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: submitted.json.donor_account_id, status: 'approved', external_id: 'ADA-7' });

    expect((await call('GET', `/v1/grant_requests/${requestId}`)).body.status).toBe('pending');
    const done = await call('POST', `/v1/grant_requests/${requestId}/submit`, { external_grant_id: 'G-1', comment: 'sent' });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('submitted');
    expect((await call('POST', `/v1/grant_requests/${requestId}/submit`, {})).status).toBe(409);
    expect((await call('POST', `/v1/grant_requests/${requestId}/reject`, { reason: 'late' })).status).toBe(409);

    const pools = await call('GET', `/v1/giving_pools?donor_account_id=${submitted.json.donor_account_id as string}`);
    expect(pools.status).toBe(200);
    const pool = (pools.body.results as { id: string; name: string }[])[0]!;
    expect(pool.name).toBe('Lovelace Family Fund');
    expect((await call('GET', `/v1/giving_pools/${pool.id}`)).status).toBe(200);
    const list = await call('GET', '/v1/grant_requests');
    expect(list.status).toBe(200);
    const accounts = await call('GET', '/v1/donor_accounts?status=approved');
    expect(accounts.status).toBe(200);
    expect((accounts.body.results as { status: string }[]).every((a) => a.status === 'approved')).toBe(true);
  });
});

describe('state rules', () => {
  async function account(email: string) {
    return (await call('POST', '/v1/donor_accounts', { donor: { email } })).body.id as string;
  }

  it('refuses a second account for one email (409), and disabling or enabling a pending account (409)', async () => {
    const id = await account('dup@example.org');
    const again = await call('POST', '/v1/donor_accounts', { donor: { email: 'DUP@example.org' } });
    expect(again.status).toBe(409);
    expect((await call('POST', `/v1/donor_accounts/${id}/disable`)).status).toBe(409);
    expect((await call('POST', `/v1/donor_accounts/${id}/enable`)).status).toBe(409);
  });

  it('disables and enables an approved account idempotently', async () => {
    const id = await account('toggle@example.org');
    const { code } = (await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, {})).body as { code: string };
    expect((await call('POST', '/v1/authorization_tokens/verify', { code })).status).toBe(200);
    for (let i = 0; i < 2; i += 1) {
      const disabled = await call('POST', `/v1/donor_accounts/${id}/disable`);
      expect(disabled.status).toBe(200);
      expect(disabled.body.disabled).toBe(true);
    }
    expect((await call('POST', `/v1/donor_accounts/${id}/enable`)).body.disabled).toBe(false);
    const patched = await call('PATCH', `/v1/donor_accounts/${id}`, { donor: { last_name: 'Toggle' }, metadata: { a: 'b' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ donor: { last_name: 'Toggle' }, metadata: { a: 'b' }, status: 'approved' });
    expect((await call('PATCH', `/v1/donor_accounts/${id}`, { status: 'rejected' })).status).toBe(400);
  });

  it('answers unknown, expired, revoked and used codes with the same 404', async () => {
    const id = await account('codes@example.org');
    const expired = (await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, { expires_in: 60 })).body as {
      id: string;
      code: string;
    };
    await t.db
      .updateTable('donor_authorization_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', expired.id)
      .execute();
    const revoked = (await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, {})).body as { id: string; code: string };
    const revoke = await call('POST', `/v1/authorization_tokens/${revoked.id}/revoke`);
    expect(revoke.status).toBe(200);
    expect(revoke.body.status).toBe('revoked');
    const bodies = [];
    for (const code of ['ZZZZZZZZZZZZ', expired.code, revoked.code]) {
      const res = await call('POST', '/v1/authorization_tokens/verify', { code });
      expect(res.status).toBe(404);
      bodies.push(JSON.stringify({ ...res.body }));
    }
    expect(new Set(bodies).size).toBe(1);
    expect((await call('GET', `/v1/authorization_tokens/${expired.id}`)).body.status).toBe('expired');
    // Only a pending token can be revoked.
    expect((await call('POST', `/v1/authorization_tokens/${expired.id}/revoke`)).status).toBe(412);
  });

  it('refuses to verify a rejected account (409) and limits failed attempts (429)', async () => {
    const id = await account('rejected@example.org');
    const { code } = (await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, {})).body as { code: string };
    expect(
      (await admin('daf', 'reject-account', '--fund-provider', FUND_EIN, '--environment', 'sandbox', '--id', id, '--reason', 'fraud check'))
        .code,
    ).toBe(0);
    expect((await call('POST', '/v1/authorization_tokens/verify', { code })).status).toBe(409);
    const limited = await createApiKey(t.db, { org: FUND_EIN, environment: 'production' });
    let last = 0;
    for (let i = 0; i < 11; i += 1) {
      const res = await apiRequest(server, 'production', 'POST', '/v1/authorization_tokens/verify', {
        bearer: limited.key,
        json: { code: `WRONG${i}` },
      });
      last = res.status;
      if (i < 10) expect(res.status).toBe(404);
      else expect(res.headers.get('retry-after')).toBeTruthy();
    }
    expect(last).toBe(429);
  });

  it('bounds expires_in to 60 seconds … 90 days', async () => {
    const id = await account('ttl@example.org');
    expect((await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, { expires_in: 59 })).status).toBe(400);
    expect((await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, { expires_in: 7_776_001 })).status).toBe(400);
    const standard = (await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, {})).body as {
      created_at: string;
      expires_at: string;
    };
    expect(new Date(standard.expires_at).getTime() - new Date(standard.created_at).getTime()).toBe(30 * 86_400_000);
  });

  it('keeps providers, environments and versions apart', async () => {
    const id = await account('mine@example.org');
    expect((await call('GET', `/v1/donor_accounts/${id}`, undefined, otherKey)).status).toBe(404);
    const nonprofitKey = (await createApiKey(t.db, { org: nonprofit.ein, environment: 'sandbox' })).key;
    expect((await call('GET', '/v1/donor_accounts', undefined, nonprofitKey)).status).toBe(403);
    expect((await call('GET', '/v1/donor_accounts', undefined, key, { 'api-version': '2026-01-15' })).status).toBe(404);
    const prodKey = (await createApiKey(t.db, { org: FUND_EIN, environment: 'production' })).key;
    const prod = await apiGet(server, 'production', `/v1/donor_accounts/${id}`, { bearer: prodKey });
    expect(prod.status).toBe(404);
  });
});

describe('events and webhooks', () => {
  it('records an event per change, lists and gets them per the published schema', async () => {
    // One change of each kind, made here.
    const account = (await call('POST', '/v1/donor_accounts', { donor: { email: 'events@example.org' } })).body.id as string;
    expect((await call('PATCH', `/v1/donor_accounts/${account}`, { metadata: { step: 'updated' } })).status).toBe(200);
    const token = (await call('POST', `/v1/donor_accounts/${account}/authorization_tokens`, {})).body.id as string;
    expect((await call('POST', `/v1/authorization_tokens/${token}/revoke`)).status).toBe(200);
    const submitted = await admin(
      'daf',
      'submit-grant-request',
      '--fund-provider',
      FUND_EIN,
      '--environment',
      'sandbox',
      '--email',
      'events-donor@example.org',
      '--ein',
      nonprofit.ein,
      '--amount-cents',
      '500',
    );
    expect(submitted.code).toBe(0);
    const request = submitted.json.grant_request_id as string;
    expect((await call('POST', `/v1/grant_requests/${request}/reject`, { reason: 'test' })).status).toBe(200);

    const events = await call('GET', '/v1/events?limit=100');
    expect(events.status).toBe(200);
    const recorded = new Set(
      (events.body.results as { category: string; associated_object_id: string }[]).map((e) => `${e.category} ${e.associated_object_id}`),
    );
    for (const [kind, object] of [
      ['donor_account.created', account],
      ['donor_account.updated', account],
      ['authorization_token.created', token],
      ['authorization_token.updated', token],
      ['grant_request.created', request],
      ['grant_request.updated', request],
    ]) {
      expect(recorded).toContain(`${kind} ${object}`);
    }
    const first = (events.body.results as { id: string }[])[0]!;
    const one = await call('GET', `/v1/events/${first.id}`);
    expect(one.status).toBe(200);
    expect((await call('GET', '/v1/events?category=grant_request.created')).body.results).toEqual(
      expect.arrayContaining([expect.objectContaining({ category: 'grant_request.created', associated_object_id: request })]),
    );
    expect((await call('GET', `/v1/events/${first.id}`, undefined, otherKey)).status).toBe(404);
  });

  it('does not record an event for a change that was refused', async () => {
    expect((await call('POST', '/v1/donor_accounts', { donor: { email: 'refused@example.org' } })).status).toBe(201);
    const before = await t.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect((await call('POST', '/v1/donor_accounts', { donor: { email: 'refused@example.org' } })).status).toBe(409);
    const after = await t.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('manages subscriptions: generated or given Standard Webhooks secrets, target rules, status changes', async () => {
    const generated = await call('POST', '/v1/event_subscriptions', { url: 'http://127.0.0.1:9/hooks', category: 'donor_account.created' });
    expect(generated.status).toBe(201);
    expect(generated.body.signing_secret).toMatch(/^whsec_/);
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const given = await call('POST', '/v1/event_subscriptions', {
      url: 'https://hooks.example.org/in',
      category: 'grant_request.updated',
      signing_secret: secret,
    });
    expect(given.status).toBe(201);
    expect(given.body.signing_secret).toBeUndefined();
    expect(
      (
        await call('POST', '/v1/event_subscriptions', {
          url: 'https://x.example/h',
          category: 'donation.created',
          signing_secret: 'whsec_short',
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('POST', '/v1/event_subscriptions', { url: 'http://hooks.example.org/in', category: 'donation.created' })).status,
    ).toBe(400);
    expect((await call('POST', '/v1/event_subscriptions', { url: 'https://x.example/h', category: 'nonsense' })).status).toBe(400);
    const list = await call('GET', '/v1/event_subscriptions');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const disabled = await call('PATCH', `/v1/event_subscriptions/${given.body.id as string}`, { status: 'disabled' });
    expect(disabled.status).toBe(200);
    expect(disabled.body.status).toBe('disabled');
    expect((await call('GET', `/v1/event_subscriptions/${given.body.id as string}`)).status).toBe(200);
    await call('PATCH', `/v1/event_subscriptions/${generated.body.id as string}`, { status: 'deleted' });
  });

  it('delivers every event kind to a local receiver, signed so that standardwebhooks verifies it', async () => {
    const receiver = await startReceiver();
    try {
      const kinds = [
        'donor_account.created',
        'donor_account.updated',
        'authorization_token.created',
        'authorization_token.updated',
        'grant_request.created',
        'grant_request.updated',
      ];
      const secrets: Record<string, string> = {};
      for (const category of kinds) {
        const sub = await call('POST', '/v1/event_subscriptions', { url: receiver.url, category });
        secrets[category] = sub.body.signing_secret as string;
      }
      const submitted = await admin(
        'daf',
        'submit-grant-request',
        '--fund-provider',
        FUND_EIN,
        '--environment',
        'sandbox',
        '--email',
        'hooks@example.org',
        '--ein',
        nonprofit.ein,
        '--amount-cents',
        '1000',
      );
      const message = (await admin('mail', 'list', '--to', 'hooks@example.org')).json.mail as { body: string }[];
      const code = /code: ([A-Z0-9]{12})/.exec(message[0]!.body)![1]!;
      await call('POST', '/v1/authorization_tokens/verify', { code });
      await call('POST', `/v1/grant_requests/${submitted.json.grant_request_id as string}/reject`, { reason: 'test' });
      await expect
        .poll(() => new Set(receiver.received.map((r) => (JSON.parse(r.body) as { category: string }).category)).size, { timeout: 10_000 })
        .toBe(6);
      for (const hook of receiver.received) {
        const event = JSON.parse(hook.body) as { id: string; category: string };
        const verified = new Webhook(secrets[event.category]!).verify(hook.body, {
          'webhook-id': hook.headers['webhook-id'] as string,
          'webhook-timestamp': hook.headers['webhook-timestamp'] as string,
          'webhook-signature': hook.headers['webhook-signature'] as string,
        });
        expect(verified).toMatchObject({ id: event.id, category: event.category });
        expect(hook.headers['webhook-id']).toBe(event.id);
      }
      const deliveries = await admin('webhooks', 'deliveries', '--status', 'succeeded');
      expect((deliveries.json.deliveries as unknown[]).length).toBeGreaterThanOrEqual(6);
    } finally {
      await receiver.close();
    }
  });
});
