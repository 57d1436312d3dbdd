import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import type { FdxConsentRequest } from '../../authorizations/fdx-consent-request.js';
import { accountWords, describeFdxConsentRequest, type ConsentRequestWords } from '../../authorizations/fdx-consent-words.js';
import { listConsentableAccounts } from '../../authorizations/fdx-consents-repository.js';
import { fdxConsentRequestOf } from '../fdx-authorization-details.js';

/**
 * The consent screen's part for an FDX consent request (docs/bank-data.md, "Consents"): what
 * will be shared, in plain words, for how long and how far back, and the organization's bank
 * accounts to pick from. Nothing picked (when accounts are asked for) cannot be approved.
 */

export interface AccountChoice {
  id: string;
  label: string;
  masked: string;
  /** The kind of account (its product), when its nickname is the label. */
  product: string | null;
  closed: boolean;
}

export interface FdxConsentStep {
  request: FdxConsentRequest;
  words: ConsentRequestWords;
  /** Offered when the request asks for ACCOUNT resources; empty then means nothing can be approved. */
  accounts: AccountChoice[];
  asksForAccounts: boolean;
  /** Why it cannot be approved, when it cannot. */
  refusal?: string;
}

/** The form field of one account's checkbox: one name per account, so the form stays a plain map. */
export const accountField = (id: string) => `account_${id}`;

export async function fdxConsentStep(
  db: Db,
  environment: Environment,
  organizationId: string,
  params: Record<string, unknown>,
): Promise<FdxConsentStep | undefined> {
  const request = fdxConsentRequestOf(params);
  if (!request) return undefined;
  const asksForAccounts = request.resources.some((r) => r.resourceType === 'ACCOUNT');
  const rows = asksForAccounts ? await listConsentableAccounts(db, environment, organizationId) : [];
  const accounts = rows.map((r) => ({ id: r.id, ...accountWords(r), closed: r.status === 'CLOSED' }));
  const refusal =
    asksForAccounts && accounts.length === 0 ? 'The organization has no bank accounts to share in this environment.' : undefined;
  return { request, words: describeFdxConsentRequest(request), accounts, asksForAccounts, ...(refusal ? { refusal } : {}) };
}

/** The offered accounts the approver ticked (anything else in the form is ignored). */
export function chosenAccounts(step: FdxConsentStep, form: Record<string, string>): string[] {
  return step.accounts.filter((a) => form[accountField(a.id)] === 'on').map((a) => a.id);
}
