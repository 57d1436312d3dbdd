/**
 * Baseline for the gateway scenario: a Koa + pg endpoint that runs the same page query as
 * `GET /v1/donations` (one organization's donations in one environment, keyset-paged over
 * (created_at desc, id desc) with the same page-token format, limit + 1 rows) and answers
 * the same JSON, with no authentication, no role check and no middleware.
 *
 * Environment: PORT (0, the default: an ephemeral one), DATABASE_URL, ORG_ID, ENVIRONMENT
 * (default sandbox), POOL_MAX (default 10, Almoner's database_pool_max). Prints
 * {"ready": true, "port"} when listening.
 *
 * Run: node --import tsx bench/baseline/donations-endpoint.ts
 */
import Koa from 'koa';
import { pool, serve } from './endpoint.js';

const orgId = process.env.ORG_ID!;
const environment = process.env.ENVIRONMENT ?? 'sandbox';

interface Row {
  id: string;
  external_id: string;
  payment_source_id: string;
  amount_gross: string;
  amount_net: string;
  amount_fee: string;
  currency: string;
  purpose: string;
  note: string;
  primary_donor: unknown;
  created_at: Date;
  updated_at: Date;
  canceled_at: Date | null;
  payment_status: string;
}

function decodeCursor(token: string | undefined): [Date, string] | undefined {
  if (!token) return undefined;
  const [createdAt, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [string, string];
  return [new Date(createdAt), id];
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path !== '/v1/donations') {
    ctx.status = 404;
    return;
  }
  const limit = Math.min(100, Math.max(1, Number(ctx.query.limit ?? 100)));
  const cursor = decodeCursor(typeof ctx.query.page_token === 'string' ? ctx.query.page_token : undefined);
  const params: unknown[] = [orgId, environment];
  let where = 'organization_id = $1 and environment = $2';
  if (cursor) {
    params.push(cursor[0], cursor[1]);
    where += ' and (created_at, id) < ($3, $4)';
  }
  params.push(limit + 1);
  const { rows } = await pool.query<Row>(
    `select * from donations where ${where} order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  ctx.body = {
    results: items.map((row) => ({
      id: row.id,
      external_id: row.external_id,
      payment_source_id: row.payment_source_id,
      amount_gross: Number(row.amount_gross),
      amount_net: Number(row.amount_net),
      amount_fee: Number(row.amount_fee),
      currency: row.currency,
      purpose: row.purpose,
      note: row.note,
      ...(row.primary_donor ? { attribution: { primary_donor: row.primary_donor } } : {}),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      canceled_at: row.canceled_at?.toISOString() ?? null,
      payment_status: row.payment_status,
    })),
    ...(rows.length > limit && last
      ? { next_page_token: Buffer.from(JSON.stringify([last.created_at.toISOString(), last.id])).toString('base64url') }
      : {}),
  };
});

await serve(app);
