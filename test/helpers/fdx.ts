import crypto from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import type { DepositTransactionType } from '../../src/db/schema-fdx.js';
import { seedBankData } from '../../src/demo/bank-data.js';
import { endpoints, type Env } from './flow.js';
import { accessToken, apiGet } from './gateway.js';
import type { OAuthTestServer, Staff } from './oauth-server.js';
import { checkGatewayResponse } from './published-openapi.js';
import { documentVersion, servedDocument } from './served-openapi.js';

/** FDX test fixtures: clients that may call the API, tokens, bank data with exact timestamps. */

export const FDX_SCOPES = ['read_only', 'read:bank_accounts', 'sync:connected_accounts'];
const redirectFor = (environment: Env) =>
  environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback';

/** A client registered for FDX; callers must be inside its allow-list (loopback by default). */
export function fdxClient(
  server: OAuthTestServer,
  environment: Env = 'production',
  options: { ipAllowList?: string[]; scopes?: string[] } = {},
) {
  return server.registerClient({
    environment,
    redirectUris: [redirectFor(environment)],
    scopes: options.scopes ?? FDX_SCOPES,
    ipAllowList: options.ipAllowList ?? ['127.0.0.0/8'],
  });
}

/** An access token approved by an admin (FDX scopes are an admin's or owner's decision). */
export function fdxToken(
  server: OAuthTestServer,
  client: { client_id: string; client_secret: string },
  staff: Staff,
  options: { environment?: Env; scope?: string; as?: keyof Staff['users']; tokenHeaders?: Record<string, string> } = {},
) {
  const environment = options.environment ?? 'production';
  return accessToken(server, client, {
    environment,
    redirectUri: redirectFor(environment),
    scope: options.scope ?? 'read_only read:bank_accounts',
    login: staff.users[options.as ?? 'admin'],
    ...(options.tokenHeaders ? { tokenHeaders: options.tokenHeaders } : {}),
  });
}

export const fdxGet = (
  server: OAuthTestServer,
  path: string,
  bearer: string,
  options: { environment?: Env; headers?: Record<string, string> } = {},
) => apiGet(server, options.environment ?? 'production', `/fdx/v6${path}`, { bearer, headers: options.headers });

export interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

/**
 * A statement download as raw bytes (no Accept header at all when accept is undefined),
 * checked against the published operation like every gateway response (a file by its media
 * type, a problem by its schema).
 */
export async function fdxDownload(
  server: OAuthTestServer,
  path: string,
  bearer: string,
  accept?: string,
  environment: Env = 'production',
): Promise<Download> {
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (accept !== undefined) headers.accept = accept;
  const api = endpoints(server, environment).api;
  const served = await servedDocument(api, documentVersion(`/fdx/v6${path}`, headers), headers);
  const response = await fetch(`${api}/fdx/v6${path}`, { headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  const contentType = response.headers.get('content-type');
  const text = bytes.toString('utf8');
  checkGatewayResponse(
    {
      method: 'GET',
      path: `/fdx/v6${path}`,
      requestHeaders: headers,
      status: response.status,
      contentType,
      text: /json/.test(contentType ?? '') ? text : undefined,
    },
    served,
  );
  return { status: response.status, headers: response.headers, bytes, text };
}

export function seedBank(db: Db, staff: Staff, environment: Env, counts: { accounts?: number; transactionsPerAccount?: number } = {}) {
  return db.transaction().execute((trx) => seedBankData(trx, { organizationId: staff.orgId, environment, ...counts }));
}

/** An account with no activity, for tests that insert exactly the transactions they reason about. */
export async function createAccount(
  db: Db,
  staff: Staff,
  environment: Env,
  values: { openingBalance?: number; openedOn?: string; accountNumber?: string } = {},
): Promise<{ id: string; accountNumber: string }> {
  const accountNumber = values.accountNumber ?? `9${crypto.randomInt(100_000_000, 999_999_999)}`;
  const row = await db
    .insertInto('deposit_accounts')
    .values({
      environment,
      organization_id: staff.orgId,
      account_number: accountNumber,
      routing_transit_number: '011000015',
      product_name: 'Nonprofit Checking',
      nickname: 'Test',
      opened_on: values.openedOn ?? '2020-01-01',
      opening_balance: values.openingBalance ?? 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, accountNumber };
}

export interface TxInput {
  at: Date;
  cents: number;
  direction?: 'DEBIT' | 'CREDIT';
  /** Posted this long after `at` (default 1 hour); null leaves it pending. */
  postedAfterMs?: number | null;
  type?: DepositTransactionType;
  description?: string;
  reference?: string;
  checkNumber?: number;
}

export async function insertTransactions(db: Db, accountId: string, inputs: TxInput[]): Promise<string[]> {
  const rows = inputs.map((t) => {
    const pending = t.postedAfterMs === null;
    return {
      id: crypto.randomUUID(),
      account_id: accountId,
      transaction_timestamp: t.at,
      posted_timestamp: pending ? null : new Date(t.at.getTime() + (t.postedAfterMs ?? 3_600_000)),
      status: pending ? ('PENDING' as const) : ('POSTED' as const),
      debit_credit: t.direction ?? 'CREDIT',
      amount: t.cents,
      transaction_type: t.type ?? 'DEPOSIT',
      description: t.description ?? 'Deposit',
      reference: t.reference ?? `REF${crypto.randomInt(1e9)}`,
      check_number: t.checkNumber ?? null,
    };
  });
  for (let i = 0; i < rows.length; i += 1000)
    await db
      .insertInto('deposit_transactions')
      .values(rows.slice(i, i + 1000))
      .execute();
  return rows.map((r) => r.id);
}

export async function createStatement(db: Db, accountId: string, periodStart: string, periodEnd: string): Promise<string> {
  return (
    await db
      .insertInto('deposit_statements')
      .values({ account_id: accountId, period_start: periodStart, period_end: periodEnd })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
}

export const isoDay = (date: Date) => date.toISOString().slice(0, 10);
export const daysAgo = (days: number, from = new Date()) =>
  new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() - days));
