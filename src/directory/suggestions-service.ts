import crypto from 'node:crypto';
import { parseEin } from '../accounts/ein.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { invalid, notFound } from '../errors/domain-error.js';
import { insertAddressSuggestions, insertContactSuggestions, listedEins } from './suggestions-repository.js';
import type { GrantmakerScope } from './verification-repository.js';

/**
 * Mailing addresses and contacts grantmakers upload for directory organizations
 * (docs/directory.md, "Address and contact suggestions"): recorded for review, all of an upload
 * or none of it.
 */

export interface AddressEntry {
  ein: string;
  line1: string;
  line2?: string;
  city: string;
  state: string;
  zip: string;
}

export interface ContactEntry {
  ein: string;
  email: string;
  phone?: string;
  first_name?: string;
  last_name?: string;
}

function suggestionId(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replace(/-/g, '')}`;
}

/**
 * Each entry's EIN in nine digits; a malformed one is 400 and one the directory does not list is
 * 404, both naming the entry, and nothing of the upload is kept.
 */
async function einsOf(db: Db, entries: readonly { ein: string }[]): Promise<string[]> {
  const eins = entries.map((entry, i) => {
    const ein = parseEin(entry.ein);
    if (!ein) throw invalid(`entries.${i}.ein must be 9 digits, as 12-3456789 or 123456789`);
    return ein;
  });
  const listed = await listedEins(db, eins);
  const unknown = eins.map((ein, i) => ({ ein, i })).filter(({ ein }) => !listed.has(ein));
  if (unknown.length)
    throw notFound(
      `No organization of the directory has the EIN of ${unknown
        .slice(0, 5)
        .map(({ ein, i }) => `entries.${i} (${ein})`)
        .join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}; nothing was recorded.`,
    );
  return eins;
}

const optional = (value: string | undefined) => value?.trim() || null;

export async function recordAddressSuggestions(db: Db, scope: GrantmakerScope, entries: readonly AddressEntry[]): Promise<void> {
  const eins = await einsOf(db, entries);
  await inTransaction(db, (trx) =>
    insertAddressSuggestions(
      trx,
      entries.map((entry, i) => ({
        id: suggestionId('nas'),
        environment: scope.environment,
        grantmaker_id: scope.grantmakerId,
        ein: eins[i]!,
        line1: entry.line1.trim(),
        line2: optional(entry.line2),
        city: entry.city.trim(),
        state: entry.state,
        zip: entry.zip,
      })),
    ),
  );
}

export async function recordContactSuggestions(db: Db, scope: GrantmakerScope, entries: readonly ContactEntry[]): Promise<void> {
  const eins = await einsOf(db, entries);
  await inTransaction(db, (trx) =>
    insertContactSuggestions(
      trx,
      entries.map((entry, i) => ({
        id: suggestionId('ncs'),
        environment: scope.environment,
        grantmaker_id: scope.grantmakerId,
        ein: eins[i]!,
        email: entry.email.trim(),
        phone: optional(entry.phone),
        first_name: optional(entry.first_name),
        last_name: optional(entry.last_name),
      })),
    ),
  );
}
