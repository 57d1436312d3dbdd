import { parseEin } from '../accounts/ein.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { invalid } from '../errors/domain-error.js';
import { findDirectoryOrganization, searchDirectoryByName, useSearchSettings, type DirectoryRow } from './repository.js';
import { searchName } from './search-name.js';

/**
 * Searching the organizations directory (docs/directory.md, "Searching"), with the parameters of
 * the published organization search: `q` (an EIN, else a typeahead name query), the deprecated
 * `ein` and `name`, and `limit` (default and maximum 20).
 */

export const DIRECTORY_SEARCH_LIMIT = 20;
/** Longer is no name anyone types; refused rather than compared. */
const MAX_QUERY_LENGTH = 200;

export type DirectoryOrganization = Omit<DirectoryRow, 'search_name' | 'search_words'>;

export interface DirectorySearch {
  q?: string;
  ein?: string;
  name?: string;
  limit?: number;
}

function organization(row: DirectoryRow): DirectoryOrganization {
  const { search_name: _, search_words: __, ...rest } = row;
  return rest;
}

function limitOf(limit: number | undefined): number {
  if (limit === undefined) return DIRECTORY_SEARCH_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > DIRECTORY_SEARCH_LIMIT)
    throw invalid(`limit must be a whole number from 1 to ${DIRECTORY_SEARCH_LIMIT}`);
  return limit;
}

function given(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * What a search asks for: an EIN (from `q` when it is one, or from `ein`) is an exact lookup and
 * the name criteria are not applied; otherwise `q`, or the deprecated `name` when `q` is absent,
 * is the name query.
 */
function criteria(search: DirectorySearch): { eins: string[] } | { name: string } {
  const q = given(search.q);
  const einParam = given(search.ein);
  const eins: string[] = [];
  if (einParam !== undefined) {
    const ein = parseEin(einParam);
    if (!ein) throw invalid('ein must be 9 digits, as 12-3456789 or 123456789');
    eins.push(ein);
  }
  const qEin = q === undefined ? undefined : parseEin(q);
  if (qEin) eins.push(qEin);
  if (eins.length) return { eins };
  const text = q ?? given(search.name);
  if (text === undefined) throw invalid('q is required: an EIN or the start of a name');
  if (text.length > MAX_QUERY_LENGTH) throw invalid(`q must be at most ${MAX_QUERY_LENGTH} characters`);
  const name = searchName(text);
  if (!name) throw invalid('q must contain a letter or a digit');
  return { name };
}

export async function searchDirectory(db: Db, search: DirectorySearch): Promise<DirectoryOrganization[]> {
  const limit = limitOf(search.limit);
  const asked = criteria(search);
  if ('eins' in asked) {
    // Two different EINs (q and ein) name no one organization.
    if (new Set(asked.eins).size > 1) return [];
    const row = await findDirectoryOrganization(db, asked.eins[0]!);
    return row ? [organization(row)] : [];
  }
  const rows = await inTransaction(db, async (trx) => {
    await useSearchSettings(trx);
    return searchDirectoryByName(trx, asked.name, limit);
  });
  return rows.map(organization);
}

/** One organization of the directory by EIN (12-3456789 or 123456789), or undefined. */
export async function directoryOrganization(db: Db, ein: string): Promise<DirectoryOrganization | undefined> {
  const digits = parseEin(ein);
  if (!digits) throw invalid('ein must be 9 digits, as 12-3456789 or 123456789');
  const row = await findDirectoryOrganization(db, digits);
  return row ? organization(row) : undefined;
}
