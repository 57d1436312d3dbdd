/**
 * Baseline for the disbursements scenario: a bare Koa + pg endpoint that writes what Almoner's
 * create and approve write (docs/grantmaking.md, "Disbursements"), each in one transaction, with
 * no authentication, no validation beyond the amount, no idempotency and no middleware.
 *
 * - `POST /v1/disbursements`: reads the recipient, the enabled program and the disbursements
 *   account; inserts the disbursement (`pending_approval`), its transaction and the
 *   `disbursement.created` event (and reads the event's subscriptions, as the outbox does).
 * - `POST /v1/disbursements/:id/approve`: locks the financial account, then the disbursement;
 *   reads the available balance; when it covers the amount, inserts the hold's ledger transfer
 *   and its two entries (the ledger's trigger moves the balances, as for Almoner); updates the
 *   disbursement (`submitted` or `awaiting_balance`) and inserts `disbursement.updated`.
 *
 * Environment: PORT (0, the default: an ephemeral one), DATABASE_URL, ORG_ID, ACCOUNT_ID (the
 * grantmaker's disbursements financial account), ENVIRONMENT (default sandbox), POOL_MAX
 * (default 10, Almoner's database_pool_max). Prints {"ready": true, "port"} when listening.
 *
 * Run: node --import tsx bench/baseline/disbursements-endpoint.ts
 */
import Koa from 'koa';
import type pg from 'pg';
import { inTransaction, pool, prefixedId, readJson, serve } from './endpoint.js';

const orgId = process.env.ORG_ID!;
const accountId = process.env.ACCOUNT_ID!;
const environment = process.env.ENVIRONMENT ?? 'sandbox';
async function event(client: pg.PoolClient, category: string, objectId: string) {
  const eventId = prefixedId('evt');
  await client.query(
    `insert into events (id, environment, organization_id, category, associated_object_id, associated_object_type)
     values ($1, $2, $3, $4, $5, 'disbursement')`,
    [eventId, environment, orgId, category, objectId],
  );
  await client.query(
    `select id from event_subscriptions where organization_id = $1 and environment = $2 and category = $3 and status = 'active'`,
    [orgId, environment, category],
  );
}

interface Disbursement {
  id: string;
  amount: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

function shape(row: Disbursement, transactions: unknown[]) {
  return {
    id: row.id,
    amount: Number(row.amount),
    status: row.status,
    transactions,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

async function create(body: { organization_id: string; amount: number; transactions: { amount: number; type: string }[] }) {
  return inTransaction(async (client) => {
    const recipient = (await client.query('select id from directory_organizations where id = $1', [body.organization_id])).rows[0];
    if (!recipient) return undefined;
    const program = (
      await client.query(
        `select id, name from programs where organization_id = $1 and environment = $2 and grant_disbursement_status = 'enabled' order by created_at limit 2`,
        [orgId, environment],
      )
    ).rows[0] as { id: string };
    await client.query(
      `select id from financial_accounts where organization_id = $1 and environment = $2 and account_type = 'disbursements'`,
      [orgId, environment],
    );
    const row = (
      await client.query<Disbursement>(
        `insert into disbursements (id, environment, organization_id, financial_account_id, program_id, recipient_organization_id, amount, created_by)
         values ($1, $2, $3, $4, $5, $6, $7, 'baseline') returning *`,
        [prefixedId('disbursement'), environment, orgId, accountId, program.id, recipient.id, body.amount],
      )
    ).rows[0]!;
    const transactions = await client.query(
      `insert into disbursement_transactions (id, disbursement_id, position, amount, type, details) values ($1, $2, 0, $3, $4, '{}') returning *`,
      [prefixedId('transaction'), row.id, body.transactions[0]!.amount, body.transactions[0]!.type],
    );
    await event(client, 'disbursement.created', row.id);
    return shape(row, transactions.rows);
  });
}

async function approve(disbursementId: string) {
  return inTransaction(async (client) => {
    const account = (
      await client.query<{ available_ledger_account_id: string; held_ledger_account_id: string }>(
        'select available_ledger_account_id, held_ledger_account_id from financial_accounts where id = $1 and environment = $2 for update',
        [accountId, environment],
      )
    ).rows[0]!;
    const row = (
      await client.query<Disbursement>(
        'select * from disbursements where id = $1 and organization_id = $2 and environment = $3 for update',
        [disbursementId, orgId, environment],
      )
    ).rows[0];
    if (!row || row.status !== 'pending_approval') return undefined;
    const balance = (
      await client.query<{ balance: string }>('select balance from ledger_accounts where id = $1', [account.available_ledger_account_id])
    ).rows[0]!;
    const covered = BigInt(balance.balance) >= BigInt(row.amount);
    if (covered) {
      const transferId = prefixedId('ltr');
      await client.query(
        `insert into ledger_transfers (id, environment, kind, reference_type, reference_id) values ($1, $2, 'hold', 'disbursement', $3)`,
        [transferId, environment, row.id],
      );
      // By account id, as the ledger orders entries (one lock order).
      const entries = [
        [account.available_ledger_account_id, `-${row.amount}`],
        [account.held_ledger_account_id, row.amount],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
      await client.query(
        `insert into ledger_entries (id, transfer_id, account_id, environment, amount) values ($1, $2, $3, $4, $5), ($6, $2, $7, $4, $8)`,
        [prefixedId('lent'), transferId, entries[0]![0], environment, entries[0]![1], prefixedId('lent'), entries[1]![0], entries[1]![1]],
      );
    }
    const updated = (
      await client.query<Disbursement>(
        `update disbursements set status = $2, approved_by = 'baseline', approved_at = now(), updated_at = now() where id = $1 returning *`,
        [row.id, covered ? 'submitted' : 'awaiting_balance'],
      )
    ).rows[0]!;
    await event(client, 'disbursement.updated', row.id);
    const transactions = await client.query('select * from disbursement_transactions where disbursement_id = $1 order by position', [
      row.id,
    ]);
    return shape(updated, transactions.rows);
  });
}

const app = new Koa();
app.use(async (ctx) => {
  const approveMatch = /^\/v1\/disbursements\/([^/]+)\/approve$/.exec(ctx.path);
  if (ctx.method === 'POST' && ctx.path === '/v1/disbursements') {
    const body = (await readJson(ctx.req)) as Parameters<typeof create>[0];
    if (!Number.isSafeInteger(body.amount) || body.amount <= 0) {
      ctx.status = 400;
      ctx.body = { error: 'amount' };
      return;
    }
    const made = await create(body);
    ctx.status = made ? 201 : 400;
    ctx.body = made ?? { error: 'organization_id' };
  } else if (ctx.method === 'POST' && approveMatch) {
    const approved = await approve(approveMatch[1]!);
    ctx.status = approved ? 200 : 400;
    ctx.body = approved ?? { error: 'not pending_approval' };
  } else if (ctx.path === '/poke') {
    // One cheap transaction, for the harness's transaction count (bench/run.ts, transactionsVia).
    await pool.query('select 1');
    ctx.body = 'ok';
  } else ctx.status = 404;
});

await serve(app);
