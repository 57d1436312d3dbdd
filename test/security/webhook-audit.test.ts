import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { prefixedId } from '../../src/db/ids.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { apiRequest } from '../helpers/gateway.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Changing where an organization's events are sent without a trace (docs/security.md, "Webhook
 * changes that leave no trace"): adding, disabling, enabling, deleting an endpoint and replaying
 * a delivery, from the dashboard, the API and the admin CLI. Each writes its audit row, naming
 * who acted, in the transaction of the change: refused, the row takes the change with it.
 */
const probe = new StatementProbe();
const { testDatabase: t, server } = useOAuthServer({ staff: 0, plugins: [probe] });
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

const AUDIT_INSERT = /^insert into "audit_events"/;
const refuseNextAudit = () => (probe.refusal = { match: AUDIT_INSERT, error: () => new Error('the audit row could not be written') });
const webhookRows = (s: Staff) =>
  t.db
    .selectFrom('audit_events')
    .select(['event', 'environment', 'actor_user_id', 'client_id', 'ip', 'request_id', 'details'])
    .where('organization_id', '=', s.orgId)
    .where('event', 'like', 'webhook.%')
    .orderBy('id')
    .execute();
const statusOf = async (id: string) =>
  (await t.db.selectFrom('event_subscriptions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

describe('webhook changes in the audit log', () => {
  it('from the dashboard: add, replay, disable, enable, delete each write a row naming the user; a refused row undoes its change', async () => {
    const s = await createStaff(t.db, { kind: 'fund_provider' });
    const session = await dashboardSession(server, 'sandbox', s.users.admin);
    const added = await session.browser.submit(await session.get(`/orgs/${s.ein}/webhooks`), '/webhooks', {
      url: receiver.url,
      category: 'donor_account.created',
    });
    expect(added.status).toBe(201);
    const subscription = await t.db
      .selectFrom('event_subscriptions')
      .select(['id', 'url'])
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    const eventId = await t.db.transaction().execute((trx) =>
      emitEvent(trx, {
        environment: 'sandbox',
        organizationId: s.orgId,
        category: 'donor_account.created',
        objectId: prefixedId('donor_account'),
        objectType: 'donor_account',
      }),
    );
    const delivery = await t.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', eventId).executeTakeFirstOrThrow();

    const replayed = await session.browser.submit(await session.get(`/orgs/${s.ein}/webhooks`), '/webhooks/replay');
    expect(replayed.html).toContain('The delivery is queued again');
    const disabled = await session.browser.submit(replayed, '/webhooks/status', { status: 'disabled' });
    expect(disabled.html).toContain('The endpoint is disabled');
    // Disabling what is disabled changes nothing, and says nothing in the log.
    expect((await session.browser.submit(disabled, '/webhooks/status', { status: 'disabled' })).status).toBe(200);
    const enabled = await session.browser.submit(disabled, '/webhooks/status', { status: 'active' });
    expect(enabled.html).toContain('The endpoint is active again');

    // The audit row refused: the change is refused with it (one transaction).
    refuseNextAudit();
    expect((await session.browser.submit(enabled, '/webhooks/status', { status: 'deleted' })).status).toBe(500);
    expect(await statusOf(subscription.id)).toBe('active');
    const deleted = await session.browser.submit(await session.get(`/orgs/${s.ein}/webhooks`), '/webhooks/status', { status: 'deleted' });
    expect(deleted.status).toBe(200);
    expect(await statusOf(subscription.id)).toBe('deleted');

    const by = {
      environment: 'sandbox',
      actor_user_id: s.users.admin.id,
      client_id: null,
      ip: '127.0.0.1',
      request_id: expect.any(String),
    };
    const about = { subscription: subscription.id, url: subscription.url, via: 'dashboard' };
    expect(await webhookRows(s)).toEqual([
      { event: 'webhook.added', ...by, details: { ...about, category: 'donor_account.created' } },
      { event: 'webhook.replayed', ...by, details: { ...about, delivery: delivery.id, event: eventId } },
      { event: 'webhook.disabled', ...by, details: { ...about, previous_status: 'active' } },
      { event: 'webhook.enabled', ...by, details: { ...about, previous_status: 'disabled' } },
      { event: 'webhook.deleted', ...by, details: { ...about, previous_status: 'active' } },
    ]);
    // The Admin's audit page lists them, under their name.
    const page = await session.get(`/orgs/${s.ein}/audit`);
    for (const event of ['webhook.added', 'webhook.replayed', 'webhook.disabled', 'webhook.enabled', 'webhook.deleted'])
      expect(page.html, event).toContain(`<code>${event}</code>`);
    expect(page.html).toContain(s.users.admin.email);

    // The maker's CLI replays too, audited without an actor.
    const cli = await runAdmin(['webhooks', 'replay', delivery.id], { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY });
    expect(cli.code, cli.stderr).toBe(0);
    expect((await webhookRows(s)).at(-1)).toMatchObject({
      event: 'webhook.replayed',
      actor_user_id: null,
      ip: null,
      details: { ...about, delivery: delivery.id, via: 'admin_cli' },
    });
  });

  it('from the API: create, disable, enable, delete each write a row naming the API key; a refused row undoes its change', async () => {
    const s = await createStaff(t.db, { kind: 'fund_provider' });
    const key = await createApiKey(t.db, { org: s.ein, environment: 'sandbox' });
    const call = (method: string, path: string, json?: unknown) => apiRequest(server, 'sandbox', method, path, { bearer: key.key, json });
    const created = await call('POST', '/v1/event_subscriptions', { url: receiver.url, category: 'grant_request.created' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // Asked again, the same subscription is answered: nothing new, nothing logged.
    expect((await call('POST', '/v1/event_subscriptions', { url: receiver.url, category: 'grant_request.created' })).body.id).toBe(id);
    for (const status of ['disabled', 'active'])
      expect((await call('PATCH', `/v1/event_subscriptions/${id}`, { status })).body.status).toBe(status);

    refuseNextAudit();
    expect((await call('PATCH', `/v1/event_subscriptions/${id}`, { status: 'deleted' })).status).toBe(500);
    expect(await statusOf(id)).toBe('active');
    expect((await call('PATCH', `/v1/event_subscriptions/${id}`, { status: 'deleted' })).body.status).toBe('deleted');

    const by = { environment: 'sandbox', actor_user_id: null, client_id: null, ip: '127.0.0.1', request_id: expect.any(String) };
    const about = { subscription: id, url: receiver.url, via: 'api', api_key: key.id };
    expect(await webhookRows(s)).toEqual([
      { event: 'webhook.added', ...by, details: { ...about, category: 'grant_request.created' } },
      { event: 'webhook.disabled', ...by, details: { ...about, previous_status: 'active' } },
      { event: 'webhook.enabled', ...by, details: { ...about, previous_status: 'disabled' } },
      { event: 'webhook.deleted', ...by, details: { ...about, previous_status: 'active' } },
    ]);
  });
});
