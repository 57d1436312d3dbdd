import crypto from 'node:crypto';
import { FormBrowser } from './browser.js';
import type { Db } from '../../src/db/database.js';
import type { OAuthTestServer } from './oauth-server.js';

/** Helpers of the password-reset tests: ask for a link as a person would, and read it from the dev mail table. */

/** Asks for a reset link on `dashboard` with a fresh user agent; returns the answer page (the background work not yet awaited). */
export async function askForReset(dashboard: string, email: string, browser = new FormBrowser(() => false)) {
  const form = await browser.request(`${dashboard}/forgot-password`);
  return browser.submit(form, '/forgot-password', { email });
}

/** Every reset link mailed to `email` (dev mail table), oldest first, after the server's background work is done. */
export async function resetLinksFor(server: OAuthTestServer, db: Db, email: string): Promise<string[]> {
  await server.runtime.background.drain();
  const mails = await db
    .selectFrom('outbound_mail')
    .select(['body', 'subject'])
    .where('recipient', '=', email)
    .where('subject', '=', 'Reset your Almoner password')
    .orderBy('id')
    .execute();
  return mails.map((m) => /(https?:\/\/\S+\/reset-password\/[A-Za-z0-9_-]{43})/.exec(m.body)![1]!);
}

export const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest('hex');

/** Forgets every attempt counter (the limits' windows), so one test's requests do not spend another's budget. */
export async function clearAttemptCounters(db: Db): Promise<void> {
  await db.deleteFrom('attempt_counters').execute();
}
