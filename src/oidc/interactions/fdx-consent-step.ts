import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import type { FdxConsentRequest } from '../../authorizations/fdx-consent-request.js';
import { accountWords, describeFdxConsentRequest, type ConsentRequestWords } from '../../authorizations/fdx-consent-words.js';
import { listConsentableAccounts } from '../../authorizations/fdx-consents-repository.js';
import { fdxConsentRequestOf } from '../fdx-authorization-details.js';
import { FDX_SCOPES } from '../../accounts/scopes.js';

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

/**
 * Why a bank-data (fapi2) client's request for bank data without a consent request cannot be
 * approved: every such authorization has a consent record (docs/bank-data.md, "Consents"). The
 * push refuses such a request; this holds for one pushed before that rule.
 */
export function missingConsentRequest(fapi2: boolean, granted: readonly string[], step: FdxConsentStep | undefined): string | undefined {
  if (!fapi2 || step || !granted.some((s) => (FDX_SCOPES as readonly string[]).includes(s))) return undefined;
  return 'This application did not say which bank data it wants, for how long or how far back, so it cannot be approved. Nothing was shared with it.';
}
