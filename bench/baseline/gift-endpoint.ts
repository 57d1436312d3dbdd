/**
 * Baseline for the gift-processing lists scenario: a bare Koa + pg endpoint that runs the same
 * queries as `GET /v1/mail_items` and `GET /v1/deposits` (one organization's rows in one
 * environment, keyset-paged over (created_at desc, id desc) with the same page-token format,
 * limit + 1 rows of the columns Almoner's repositories read; then the page's scans, or the page's
 * property assignments, in one query ordered as Almoner orders it, grouped by a map) and answers
 * the same JSON (a deposit's transfer carries only the published members of its rail's subhash,
 * as gift-shapes.ts picks them), with no authentication, no role check and no middleware.
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

/** The columns src/gift-processing/*-repository.ts select (MAIL_ITEM_COLUMNS, DEPOSIT_COLUMNS). */
const COLUMNS = {
  mail_items: 'id, lockbox_id, status, received_at, created_at, updated_at',
  deposits:
    'id, payment_source_id, financial_account_id, status, amount, currency, description, rail, rail_details, settled_at, returned_at, bank_created_at, created_at, updated_at',
};

/** The published members of each rail's subhash (gift-shapes.ts, transferOf). */
const RAIL_MEMBERS: Record<string, readonly string[]> = {
  check_deposit: ['auxiliary_on_us', 'routing_number', 'submitted_at', 'status'],
  inbound_ach_transfer: [
    'standard_entry_class_code',
    'company_entry_description',
    'originator_routing_number',
    'originator_company_name',
    'trace_number',
    'effective_date',
    'status',
  ],
};

function railOf(row: DepositRow): Record<string, unknown> {
  const d = row.rail_details ?? {};
  if (row.rail === 'inbound_account_transfer')
    return { created_at: typeof d.created_at === 'string' ? d.created_at : row.created_at.toISOString() };
  const out: Record<string, string> = {};
  for (const key of RAIL_MEMBERS[row.rail] ?? []) if (typeof d[key] === 'string') out[key] = d[key];
  return out;
}

function grouped<R extends Record<K, string>, K extends string, V>(rows: R[], key: K, view: (row: R) => V): Map<string, V[]> {
  const map = new Map<string, V[]>();
  for (const row of rows) {
    const list = map.get(row[key]);
    if (list) list.push(view(row));
    else map.set(row[key], [view(row)]);
  }
  return map;
}

async function page<T extends Keyed>(ctx: Koa.Context, table: 'mail_items' | 'deposits'): Promise<{ items: T[]; next?: string }> {
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
    `select ${COLUMNS[table]} from ${table} where ${where} order by created_at desc, id desc limit $${params.length}`,
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
    // As Almoner, no second query for an empty page.
    const { rows: scans } = await (items.length === 0
      ? { rows: [] }
      : pool.query<{ mail_item_id: string; file_id: string; created_at: Date }>(
          'select mail_item_id, file_id, created_at from mail_item_scans where mail_item_id = any($1::text[]) order by mail_item_id, created_at desc, file_id desc',
          [items.map((i) => i.id)],
        ));
    const byItem = grouped(scans, 'mail_item_id', (s) => ({ file_id: s.file_id, created_at: s.created_at.toISOString() }));
    ctx.body = {
      results: items.map((row) => ({
        id: row.id,
        lockbox_id: row.lockbox_id,
        status: row.status,
        received_at: row.received_at.toISOString(),
        scans: byItem.get(row.id) ?? [],
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      })),
      next_page_token: next,
    };
  } else if (ctx.path === '/v1/deposits') {
    const { items, next } = await page<DepositRow>(ctx, 'deposits');
    const { rows: assigned } = await (items.length === 0
      ? { rows: [] }
      : pool.query<{ property_id: string; resource_id: string; value: unknown }>(
          'select resource_id, property_id, value from property_assignments where resource_id = any($1::text[]) order by resource_id, property_id',
          [items.map((i) => i.id)],
        ));
    const byDeposit = grouped(assigned, 'resource_id', (a) => ({ property_id: a.property_id, value: a.value }));
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
          [row.rail]: railOf(row),
        },
        properties: byDeposit.get(row.id) ?? [],
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
