/**
 * Baseline for the gift-processing lists scenario: a bare Koa + pg endpoint that runs the same
 * queries as `GET /v1/mail_items` and `GET /v1/deposits` (one organization's rows in one
 * environment, keyset-paged over (created_at desc, id desc) with the same page-token format,
 * limit + 1 rows; then the page's scans, or the page's property assignments, in one query) and
 * answers the same JSON, with no authentication, no role check and no middleware.
 *
 * Environment: PORT (0, the default: an ephemeral one), DATABASE_URL, ORG_ID, ENVIRONMENT
 * (default sandbox), POOL_MAX (default 10, Almoner's database_pool_max). Prints
 * {"ready": true, "port"} when listening.
 *
 * Run: node --import tsx bench/baseline/gift-endpoint.ts
 */
import Koa from 'koa';
import { pool, serve } from './endpoint.js';

const orgId = process.env.ORG_ID!;
const environment = process.env.ENVIRONMENT ?? 'sandbox';

interface Keyed {
  id: string;
  created_at: Date;
}
interface MailItemRow extends Keyed {
  lockbox_id: string;
  status: string;
  received_at: Date;
  updated_at: Date;
}
interface DepositRow extends Keyed {
  payment_source_id: string;
  financial_account_id: string;
  status: string;
  amount: string;
  currency: string;
  description: string | null;
  rail: string;
  rail_details: Record<string, unknown>;
  settled_at: Date | null;
  returned_at: Date | null;
  bank_created_at: Date | null;
  updated_at: Date;
}

function decodeCursor(token: string | undefined): [Date, string] | undefined {
  if (!token) return undefined;
  const [createdAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [string, string];
  return [new Date(createdAt), id];
}

async function page<T extends Keyed>(ctx: Koa.Context, table: string): Promise<{ items: T[]; next?: string }> {
  const limit = Math.min(100, Math.max(1, Number(ctx.query.limit ?? 100)));
  const cursor = decodeCursor(typeof ctx.query.page_token === 'string' ? ctx.query.page_token : undefined);
  const params: unknown[] = [orgId, environment];
  let where = 'organization_id = $1 and environment = $2';
  if (cursor) {
    params.push(cursor[0], cursor[1]);
    where += ' and (created_at, id) < ($3, $4)';
  }
  params.push(limit + 1);
  const { rows } = await pool.query<T>(
    `select * from ${table} where ${where} order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    next:
      rows.length > limit && last ? Buffer.from(JSON.stringify([last.created_at.toISOString(), last.id])).toString('base64url') : undefined,
  };
}

const iso = (d: Date | null) => d?.toISOString();

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/v1/mail_items') {
    const { items, next } = await page<MailItemRow>(ctx, 'mail_items');
    const { rows: scans } = await pool.query<{ mail_item_id: string; file_id: string; created_at: Date }>(
      'select mail_item_id, file_id, created_at from mail_item_scans where mail_item_id = any($1) order by created_at desc, file_id desc',
      [items.map((i) => i.id)],
    );
    ctx.body = {
      results: items.map((row) => ({
        id: row.id,
        lockbox_id: row.lockbox_id,
        status: row.status,
        received_at: row.received_at.toISOString(),
        scans: scans.filter((s) => s.mail_item_id === row.id).map((s) => ({ file_id: s.file_id, created_at: s.created_at.toISOString() })),
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      })),
      next_page_token: next,
    };
  } else if (ctx.path === '/v1/deposits') {
    const { items, next } = await page<DepositRow>(ctx, 'deposits');
    const { rows: assigned } = await pool.query<{ property_id: string; resource_id: string; value: unknown }>(
      'select property_id, resource_id, value from property_assignments where resource_id = any($1)',
      [items.map((i) => i.id)],
    );
    ctx.body = {
      results: items.map((row) => ({
        id: row.id,
        payment_source_id: row.payment_source_id,
        settled_at: iso(row.settled_at),
        returned_at: iso(row.returned_at),
        status: row.status,
        transfer: {
          amount: Number(row.amount),
          currency: row.currency,
          financial_account_id: row.financial_account_id,
          description: row.description ?? undefined,
          [row.rail]: row.rail_details,
        },
        properties: assigned.filter((a) => a.resource_id === row.id).map((a) => ({ property_id: a.property_id, value: a.value })),
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
        bank_created_at: iso(row.bank_created_at),
      })),
      next_page_token: next,
    };
  } else if (ctx.path === '/poke') {
    await pool.query('select 1');
    ctx.body = 'ok';
  } else ctx.status = 404;
});

await serve(app);
