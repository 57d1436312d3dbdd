import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { apiRequest } from '../helpers/gateway.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0, config: { webhook_poll_ms: 100 } });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a fund provider's webhooks page", () => {
  it('adds an endpoint (secret shown once), shows its deliveries, replays one, disables and deletes it', async () => {
    const s = await createStaff(t.db, { kind: 'fund_provider' });
    const receiver = await startReceiver();
    try {
      const session = await dashboardSession(server, 'sandbox', s.users.admin);
      const page = await session.get(`/orgs/${s.ein}/webhooks`);
      expect(page.html).toContain('No webhook endpoints in this environment yet.');
      const added = await session.browser.submit(page, '/webhooks', { url: receiver.url, category: 'donor_account.created' });
      expect(added.status).toBe(201);
      const secret = /id="signing-secret"[^>]*>([^<]+)</.exec(added.html)![1]!;
      expect(secret).toMatch(/^whsec_/);
      const row = await t.db.selectFrom('event_subscriptions').selectAll().where('organization_id', '=', s.orgId).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ environment: 'sandbox', url: receiver.url, category: 'donor_account.created', status: 'active' });
      expect(row.signing_secret).not.toContain(secret.slice(6));

      // An event of the provider is delivered and listed.
      const key = (await createApiKey(t.db, { org: s.ein, environment: 'sandbox' })).key;
      expect(
        (
          await apiRequest(server, 'sandbox', 'POST', '/v1/donor_accounts', {
            bearer: key,
            json: { donor: { email: 'donor@example.org' } },
          })
        ).status,
      ).toBe(201);
      await until(
        async () => receiver.received.length,
        (n) => n >= 1,
      );
      const listed = await until(
        () => session.get(`/orgs/${s.ein}/webhooks`),
        (p) => p.html.includes('Delivered'),
      );
      expect(listed.html).toContain('Delivered');

      const replayed = await session.browser.submit(listed, '/webhooks/replay');
      expect(replayed.html).toContain('The delivery is queued again');
      await until(
        async () => receiver.received.length,
        (n) => n >= 2,
      );
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);

      const disabled = await session.browser.submit(replayed, '/webhooks/status', { status: 'disabled' });
      expect(disabled.html).toContain('The endpoint is disabled');
      expect(
        (await t.db.selectFrom('event_subscriptions').select('status').where('id', '=', row.id).executeTakeFirstOrThrow()).status,
      ).toBe('disabled');
      const deleted = await session.browser.submit(disabled, '/webhooks/status', { status: 'deleted' });
      expect(deleted.html).toContain('No webhook endpoints in this environment yet.');
    } finally {
      await receiver.close();
    }
  });

  it('refuses an endpoint the profile does not allow with a message on the page, and keeps what was typed', async () => {
    const s = await createStaff(t.db, { kind: 'fund_provider' });
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/webhooks`);
    const refused = await session.browser.submit(page, '/webhooks', {
      url: 'ftp://files.example.org/in',
      category: 'grant_request.created',
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('That endpoint cannot be used');
    expect(refused.html).toContain('value="ftp://files.example.org/in"');
    const unknown = await session.browser.submit(page, '/webhooks', { url: 'https://hooks.example.org/in', category: 'donation.created' });
    expect(unknown.status).toBe(400);
    expect(await t.db.selectFrom('event_subscriptions').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(0);
  });

  it('touches only the organization’s own endpoints and deliveries (404 otherwise); a grantmaker has no webhooks page, a nonprofit’s offers its giving events; a Member gets 403', async () => {
    const s = await createStaff(t.db, { kind: 'fund_provider' });
    const other = await createStaff(t.db, { kind: 'fund_provider' });
    const theirs = await t.db
      .insertInto('event_subscriptions')
      .values({
        id: 'evtsub_theirs',
        environment: 'production',
        organization_id: other.orgId,
        url: 'https://hooks.example.org/x',
        category: 'donor_account.created',
        signing_secret: 'x',
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const session = await dashboardSession(server, 'production', s.users.owner);
    const csrf = csrfOf((await session.get(`/orgs/${s.ein}/webhooks`)).html);
    expect(
      (
        await session.browser.request(`${session.origin}/orgs/${s.ein}/webhooks/status`, {
          method: 'POST',
          form: { csrf, subscription: theirs.id, status: 'deleted' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await session.browser.request(`${session.origin}/orgs/${s.ein}/webhooks/replay`, {
          method: 'POST',
          form: { csrf, delivery: 'whd_nope' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await t.db.selectFrom('event_subscriptions').select('status').where('id', '=', theirs.id).executeTakeFirstOrThrow()).status,
    ).toBe('active');

    // A grantmaker has no webhooks page; a nonprofit's offers DAFpay giving's events (docs/giving.md).
    const grantmaker = await createStaff(t.db, { kind: 'grantmaker' });
    const owner = await dashboardSession(server, 'production', grantmaker.users.owner);
    expect((await owner.get(`/orgs/${grantmaker.ein}/webhooks`)).status).toBe(404);
    expect((await owner.get(`/orgs/${grantmaker.ein}/members`)).html).not.toContain('/webhooks"');
    const nonprofit = await createStaff(t.db);
    const nonprofitOwner = await dashboardSession(server, 'production', nonprofit.users.owner);
    const page = await nonprofitOwner.get(`/orgs/${nonprofit.ein}/webhooks`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('grant.created');
    expect(page.html).not.toContain('donor_account.created');

    const member = await dashboardSession(server, 'production', s.users.member);
    expect((await member.get(`/orgs/${s.ein}/webhooks`)).status).toBe(403);
    const memberCsrf = csrfOf((await member.get('/account')).html);
    expect(
      (
        await member.browser.request(`${member.origin}/orgs/${s.ein}/webhooks`, {
          method: 'POST',
          form: { csrf: memberCsrf, url: 'https://hooks.example.org/m', category: 'donor_account.created' },
        })
      ).status,
    ).toBe(403);
  });

  it('answers an endpoint added twice with the one that exists, and resumes an endpoint paused after repeated failures (an audit row names who)', async () => {
    const s = await createStaff(t.db, { kind: 'fund_provider' });
    const session = await dashboardSession(server, 'production', s.users.admin);
    const page = await session.get(`/orgs/${s.ein}/webhooks`);
    const endpoint = { url: 'https://hooks.example.org/paused', category: 'grant_request.updated' };
    expect((await session.browser.submit(page, '/webhooks', endpoint)).status).toBe(201);
    const twice = await session.browser.submit(page, '/webhooks', endpoint);
    expect(twice.status).toBe(200);
    expect(twice.html).toContain('That endpoint exists already');
    expect(twice.html).not.toContain('id="signing-secret"');
    const rows = await t.db.selectFrom('event_subscriptions').selectAll().where('organization_id', '=', s.orgId).execute();
    expect(rows).toHaveLength(1);

    // The dispatcher paused it (test/webhooks/pause.test.ts): the page says so and offers Resume.
    await t.db
      .updateTable('event_subscriptions')
      .set({ status: 'requires_attention', consecutive_failures: 50 })
      .where('id', '=', rows[0]!.id)
      .execute();
    const paused = await session.get(`/orgs/${s.ein}/webhooks`);
    expect(paused.html).toContain('Paused: needs attention');
    expect(paused.html).toContain('>Resume</button>');
    const resumed = await session.browser.submit(paused, '/webhooks/status', { status: 'active' });
    expect(resumed.html).toContain('The endpoint is resumed');
    expect(
      await t.db
        .selectFrom('event_subscriptions')
        .select(['status', 'consecutive_failures'])
        .where('id', '=', rows[0]!.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: 'active', consecutive_failures: 0 });
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'webhook.resumed')
      .where('organization_id', '=', s.orgId)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      environment: 'production',
      actor_user_id: s.users.admin.id,
      details: { subscription: rows[0]!.id, url: endpoint.url },
    });
  });
});
