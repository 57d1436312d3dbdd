/**
 * Baseline for the gateway scenario: a Koa + pg endpoint that runs the same queries as
 * `GET /v1/donations` (one organization's donations in one environment, keyset-paged over
 * (created_at desc, id desc) with the same page-token format, limit + 1 rows of the columns the
 * list reads; then, as the list does since donations carry property values, the page's
 * property_assignments in one more query, for the page's ids only) and answers the same JSON
 * (the 2026-04-01 shape, `properties` included), with no authentication, no role check and no
 * middleware.
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

/** The columns Almoner's list reads (src/gateway/donations/repository.ts, DONATION_VIEW_COLUMNS). */
const COLUMNS = `id, external_id, payment_source_id, amount_gross, amount_net, amount_fee, currency, purpose, note, primary_donor,
  payment_status, created_at, updated_at, canceled_at, deposit_id, individual_gift_amount, joint_donor, initiation,
  donor_advised_fund_grant, platform, corporate_match, settlement_received_at, settlement_settled_at`;

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
  joint_donor: unknown;
  individual_gift_amount: string | null;
  initiation: unknown;
  donor_advised_fund_grant: unknown;
  platform: unknown;
  corporate_match: unknown;
  deposit_id: string | null;
  settlement_received_at: Date | null;
  settlement_settled_at: Date | null;
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
    `select ${COLUMNS} from donations where ${where} order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  const items = rows.slice(0, limit);
  // As Almoner, no second query for an empty page.
  const { rows: assigned } =
    items.length === 0
      ? { rows: [] }
      : await pool.query<{ resource_id: string; property_id: string; value: unknown }>(
          'select resource_id, property_id, value from property_assignments where resource_id = any($1::text[]) order by resource_id, property_id',
          [items.map((i) => i.id)],
        );
  const properties = new Map<string, { property_id: string; value: unknown }[]>();
  for (const a of assigned) {
    const list = properties.get(a.resource_id) ?? [];
    list.push({ property_id: a.property_id, value: a.value });
    properties.set(a.resource_id, list);
  }
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
      individual_gift_amount: row.individual_gift_amount === null ? undefined : Number(row.individual_gift_amount),
      attribution:
        row.primary_donor || row.joint_donor
          ? { primary_donor: row.primary_donor ?? undefined, joint_donor: row.joint_donor ?? undefined }
          : undefined,
      initiation: row.initiation ?? undefined,
      settlement:
        row.deposit_id !== null && row.settlement_received_at !== null
          ? {
              deposit_id: row.deposit_id,
              received_at: row.settlement_received_at.toISOString(),
              settled_at: row.settlement_settled_at?.toISOString(),
            }
          : undefined,
      donor_advised_fund_grant: row.donor_advised_fund_grant ?? undefined,
      platform: row.platform ?? undefined,
      corporate_match: row.corporate_match ?? undefined,
      properties: properties.get(row.id) ?? [],
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
