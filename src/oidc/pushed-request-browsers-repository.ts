import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';

/**
 * Queries on pushed_request_browsers (migration 20261129100000_pushed_request_browsers.sql):
 * which browser opened a pushed request first. middleware/request-uri-browser.ts holds the rule.
 */

/**
 * Claims an unused pushed request (by its hashed id) for `browser`, atomically: of concurrent
 * claims one inserts and the others find its row. The browser that holds the request (this
 * one, or the first), or undefined when there is no such unused request (the provider refuses it).
 */
export async function claimPushedRequest(
  db: Db,
  environment: Environment,
  requestId: string,
  browser: string,
): Promise<string | undefined> {
  const inserted = await sql<{ browser: string }>`
    insert into pushed_request_browsers (environment, request_id, browser, expires_at)
    select ${environment}, m.id, ${browser}, coalesce(m.expires_at, now())
    from oidc_models m
    where m.environment = ${environment} and m.model = 'PushedAuthorizationRequest' and m.id = ${requestId} and m.consumed_at is null
    on conflict (environment, request_id) do nothing
    returning browser`.execute(db);
  if (inserted.rows[0]) return inserted.rows[0].browser;
  const held = await db
    .selectFrom('pushed_request_browsers')
    .select('browser')
    .where('environment', '=', environment)
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  return held?.browser;
}

/** The chores' sweep: claims of requests that can no longer be opened. */
export async function deleteExpiredPushedRequestBrowsers(db: Db): Promise<void> {
  await db
    .deleteFrom('pushed_request_browsers')
    .where('expires_at', '<', sql<Date>`now()`)
    .execute();
}
