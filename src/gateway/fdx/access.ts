import type { Db } from '../../db/database.js';
import type { Caller } from '../routing/caller.js';
import { findAccount, type AccountRow, type Scope } from './accounts-repository.js';
import { consentedAccountIds } from './consent-scope.js';
import { isUuid } from './paging.js';
import { accountNotFound } from './problems.js';
import { invalid } from '../../errors/domain-error.js';

/**
 * The authorizing organization in the host's environment: the only data an FDX call may see; of
 * it, only the accounts the token's consent chose, if it has one (docs/api.md, "FDX bank-data
 * API", Consents).
 */
export function scopeOf(caller: Caller): Scope {
  const accountIds = consentedAccountIds(caller);
  return { organizationId: caller.organizationId, environment: caller.environment, ...(accountIds ? { accountIds } : {}) };
}

/**
 * The caller's account, or 701. Another organization's or environment's account, and an id
 * that cannot be one, are all "not found": existence is never revealed.
 */
export async function requireAccount(db: Db, caller: Caller, id: string): Promise<AccountRow> {
  const account = isUuid(id) ? await findAccount(db, scopeOf(caller), id) : undefined;
  if (!account) throw accountNotFound();
  return account;
}

/** A pageKey must name a row of the list being paged; anything else is a 400 (FDX code 400). */
export async function checkPageKey(pageKey: string | undefined, belongs: (id: string) => Promise<boolean>): Promise<string | undefined> {
  if (pageKey !== undefined && !(await belongs(pageKey))) throw invalid('pageKey is not a nextPageKey this API returned for this list.');
  return pageKey;
}
