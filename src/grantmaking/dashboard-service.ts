import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { DisbursementStatus } from '../db/schema-grantmaking.js';
import { invalid } from '../errors/domain-error.js';
import { centsOf } from '../ledger/ledger.js';
import { financialAccountBalanceOf, financialAccountsOf, type Scope } from './accounts-service.js';
import { directoryOrganizationOfEin, disbursementCursor, grantmakerDisbursements, incomingDisbursements } from './dashboard-repository.js';

/**
 * The dashboard's disbursement pages (docs/accounts.md, "Grantmaking and incoming
 * disbursements"): a grantmaker's disbursements account and disbursements, a nonprofit's
 * incoming ones. Approving and canceling go through disbursements-service.ts, as the API's do.
 */

/** Rows a page shows, and the id the next (older) page starts after, when there is one. */
export interface DisbursementsPage<T> {
  rows: T[];
  older: string | undefined;
}

export interface GrantmakerDisbursement {
  id: string;
  amount: number;
  status: DisbursementStatus;
  createdBy: string;
  recipientName: string;
  createdAt: Date;
  approvedAt: Date | null;
  updatedAt: Date;
}

export interface IncomingDisbursement {
  id: string;
  amount: number;
  status: DisbursementStatus;
  grantmakerName: string;
  createdAt: Date;
  approvedAt: Date | null;
  updatedAt: Date;
}

/** The balances of the grantmaker's disbursements account in the environment, in cents (undefined: none opened there). */
export async function disbursementsAccountBalance(
  db: Db,
  scope: Scope,
): Promise<{ id: string; currentBalance: number; availableBalance: number } | undefined> {
  const account = (await financialAccountsOf(db, scope)).find((a) => a.account_type === 'disbursements');
  if (!account) return undefined;
  const balance = await financialAccountBalanceOf(db, scope, account.id);
  if (!balance) return undefined;
  return { id: account.id, currentBalance: balance.current_balance, availableBalance: balance.available_balance };
}

/** A page's start: after `before`, a disbursement of the same list; any other value is a 400 naming the field. */
async function cursorOf(
  db: Db,
  environment: Environment,
  before: string | undefined,
  belongs: (row: { organization_id: string; recipient_organization_id: string }) => boolean,
): Promise<Cursor | undefined> {
  if (before === undefined) return undefined;
  const row = before.length <= 100 ? await disbursementCursor(db, environment, before) : undefined;
  if (!row || !belongs(row)) throw invalid('before: not a disbursement of this list');
  return { createdAt: row.created_at, id: row.id };
}

function paged<R extends { id: string }, T>(rows: R[], limit: number, view: (row: R) => T): DisbursementsPage<T> {
  const shown = rows.slice(0, limit);
  return { rows: shown.map(view), older: rows.length > limit ? shown[shown.length - 1]!.id : undefined };
}

/** The grantmaker's disbursements in the environment, newest first, `limit` a page. */
export async function grantmakerDisbursementsPage(
  db: Db,
  scope: Scope,
  before: string | undefined,
  limit: number,
): Promise<DisbursementsPage<GrantmakerDisbursement>> {
  const cursor = await cursorOf(db, scope.environment, before, (row) => row.organization_id === scope.organizationId);
  const rows = await grantmakerDisbursements(db, scope, cursor, limit);
  return paged(rows, limit, (r) => ({
    id: r.id,
    amount: centsOf(r.amount),
    status: r.status,
    createdBy: r.created_by,
    recipientName: r.recipient_name,
    createdAt: r.created_at,
    approvedAt: r.approved_at,
    updatedAt: r.updated_at,
  }));
}

/**
 * The approved disbursements to the directory organization with the nonprofit's EIN (nine
 * digits) in the environment, newest first; `recipient` undefined when the directory has no
 * organization of that EIN (no grantmaker can pay it yet).
 */
export async function incomingDisbursementsPage(
  db: Db,
  q: { ein: string; environment: Environment },
  before: string | undefined,
  limit: number,
): Promise<DisbursementsPage<IncomingDisbursement> & { recipient: { id: string; name: string } | undefined }> {
  const recipient = await directoryOrganizationOfEin(db, q.ein);
  if (!recipient) {
    if (before !== undefined) throw invalid('before: not a disbursement of this list');
    return { recipient: undefined, rows: [], older: undefined };
  }
  const cursor = await cursorOf(db, q.environment, before, (row) => row.recipient_organization_id === recipient.id);
  const rows = await incomingDisbursements(db, q, cursor, limit);
  return {
    recipient,
    ...paged(rows, limit, (r) => ({
      id: r.id,
      amount: centsOf(r.amount),
      status: r.status,
      grantmakerName: r.grantmaker_name,
      createdAt: r.created_at,
      approvedAt: r.approved_at,
      updatedAt: r.updated_at,
    })),
  };
}
