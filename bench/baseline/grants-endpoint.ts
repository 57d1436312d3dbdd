/**
 * Baseline for the grant capture scenario: a bare Koa + pg endpoint that writes what Almoner's
 * `POST /v1/grants` writes for a session of the sandbox's simulated DAF (docs/giving.md,
 * "Capturing grants"), in one transaction, with no authentication, no validation beyond the
 * amount, no idempotency and no middleware: the session's row lock (NOWAIT), the connect with
 * its nonprofit, the DAF, the member nonprofit by EIN; the grant, its first status, the
 * session's capture, the `grant.created` event (and the event's subscriptions, as the outbox
 * reads them).
 *
 * Environment: PORT (0, the default: an ephemeral one), DATABASE_URL, ORG_ID (the connect's
 * owner), ENVIRONMENT (default sandbox), POOL_MAX (default 10, Almoner's database_pool_max).
 * Prints {"ready": true, "port"} when listening.
 *
 * Run: node --import tsx bench/baseline/grants-endpoint.ts
 */
import Koa from 'koa';
import crypto from 'node:crypto';
import { inTransaction, pool, prefixedId, readJson, serve } from './endpoint.js';

const orgId = process.env.ORG_ID!;
const environment = process.env.ENVIRONMENT ?? 'sandbox';
interface Grant {
  id: string;
  workflow_session_id: string;
  fund_id: string;
  tracking_id: string;
  amount: string;
  status: string;
  payment_channel: string;
  created_at: Date;
  updated_at: Date;
}

async function capture(body: { workflowSessionId: string; amount: number }) {
  return inTransaction(async (client) => {
    const session = (
      await client.query<{ id: string; connect_id: string; daf_id: string; grant_id: string | null }>(
        'select * from workflow_sessions where id = $1 for update nowait',
        [body.workflowSessionId],
      )
    ).rows[0];
    if (!session || session.grant_id) return undefined;
    const connect = (
      await client.query<{ id: string; ein: string | null }>(
        `select c.id, d.ein from connects c left join directory_organizations d on d.id = c.recipient_organization_id
          where c.id = $1 and c.organization_id = $2 and c.environment = $3`,
        [session.connect_id, orgId, environment],
      )
    ).rows[0]!;
    await client.query('select * from dafs where id = $1', [session.daf_id]);
    const member = (await client.query(`select id from organizations where kind = 'nonprofit' and ein = $1`, [connect.ein])).rows[0];
    const grant = (
      await client.query<Grant>(
        `insert into grants (environment, organization_id, connect_id, workflow_session_id, tracking_id, fund_id, amount, status, payment_channel, daf_id)
         values ($1, $2, $3, $4, $5, $6, $7, 'awaiting_daf_submission', $8, $9) returning *`,
        [
          environment,
          orgId,
          connect.id,
          session.id,
          crypto.randomBytes(5).toString('hex').toUpperCase(),
          session.daf_id,
          body.amount,
          member ? 'direct' : 'dafpay_network',
          session.daf_id,
        ],
      )
    ).rows[0]!;
    await client.query(`insert into grant_statuses (grant_id, status) values ($1, 'awaiting_daf_submission')`, [grant.id]);
    await client.query('update workflow_sessions set grant_id = $2, captured_at = now() where id = $1', [session.id, grant.id]);
    await client.query(
      `insert into events (id, environment, organization_id, category, associated_object_id, associated_object_type)
       values ($1, $2, $3, 'grant.created', $4, 'grant')`,
      [prefixedId('evt'), environment, orgId, grant.id],
    );
    await client.query(
      `select id from event_subscriptions where organization_id = $1 and environment = $2 and category = 'grant.created' and status = 'active'`,
      [orgId, environment],
    );
    return {
      id: grant.id,
      workflowSessionId: grant.workflow_session_id,
      fundId: grant.fund_id,
      trackingId: grant.tracking_id,
      amount: Number(grant.amount),
      status: grant.status,
      paymentChannel: grant.payment_channel,
      createdAt: grant.created_at.toISOString(),
      updatedAt: grant.updated_at.toISOString(),
    };
  });
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method === 'POST' && ctx.path === '/v1/grants') {
    const body = (await readJson(ctx.req)) as Parameters<typeof capture>[0];
    if (!Number.isSafeInteger(body.amount) || body.amount <= 0 || body.amount % 100 !== 0) {
      ctx.status = 400;
      ctx.body = { error: 'amount' };
      return;
    }
    const made = await capture(body);
    ctx.status = made ? 201 : 404;
    ctx.body = made ?? { error: 'workflowSessionId' };
  } else if (ctx.path === '/poke') {
    // One cheap transaction, for the harness's transaction count (bench/run.ts, transactionsVia).
    await pool.query('select 1');
    ctx.body = 'ok';
  } else ctx.status = 404;
});

await serve(app);
