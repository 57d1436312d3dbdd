import type { Insertable } from 'kysely';
import type { Executor, Trx } from '../db/executor.js';
import type { NonprofitAddressSuggestionsTable, NonprofitContactSuggestionsTable } from '../db/schema-directory.js';

/** The recipient suggestions' statements (docs/directory.md, "Address and contact suggestions"). */

/** Which of `eins` the directory lists. */
export async function listedEins(ex: Executor, eins: readonly string[]): Promise<Set<string>> {
  if (eins.length === 0) return new Set();
  const rows = await ex
    .selectFrom('directory_organizations')
    .select('ein')
    .where('ein', 'in', [...new Set(eins)])
    .execute();
  return new Set(rows.map((r) => r.ein));
}

export async function insertAddressSuggestions(trx: Trx, rows: Insertable<NonprofitAddressSuggestionsTable>[]): Promise<void> {
  await trx.insertInto('nonprofit_address_suggestions').values(rows).execute();
}

export async function insertContactSuggestions(trx: Trx, rows: Insertable<NonprofitContactSuggestionsTable>[]): Promise<void> {
  await trx.insertInto('nonprofit_contact_suggestions').values(rows).execute();
}
