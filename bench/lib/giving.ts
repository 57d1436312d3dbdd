import { sql } from 'kysely';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { Db } from '../../src/db/database.js';
import { FormBrowser } from '../../test/helpers/browser.js';

/**
 * The giving scenario's setup and load (docs/benchmarks.md, "Grant capture"): a platform with a
 * sandbox API key and a Connect for a directory nonprofit, made through the API as a platform
 * makes them; the donors' authorizations (workflow sessions of the sandbox's simulated DAF) are
 * written straight to the database beforehand, as the donor flow writes them, so the run times
 * the capture alone.
 */

/** Cents per grant: whole dollars, above the simulated DAF's minimum. */
export const GRANT_CENTS = 10_000;

export interface Platform {
  organizationId: string;
  key: string;
  connectId: string;
}

async function call(origin: string, key: string | undefined, method: string, path: string, expect: number[], json?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

/** A platform with a sandbox API key and its Connect for `recipientId` (a directory organization). */
export async function addPlatform(db: Db, origin: string, ein: string, recipientId: string): Promise<Platform> {
  const org = await addOrganization(db, { ein, name: `Bench Giving Platform ${ein}`, kind: 'platform' });
  const key = (await createApiKey(db, { org: ein, environment: 'sandbox' })).key;
  const connect = await call(origin, key, 'POST', '/v1/connects', [200, 201], {
    organization_id: recipientId,
    contact: { email: 'bench@example.org' },
    name: 'Bench donate button',
  });
  return { organizationId: org.id, key, connectId: connect.id as string };
}

/** `count` authorized sessions of the simulated DAF on the connect, valid for an hour; their ids. */
export async function authorizedSessions(db: Db, connectId: string, count: number): Promise<string[]> {
  const daf = await db.selectFrom('dafs').select('id').where('simulated', '=', true).executeTakeFirstOrThrow();
  const { rows } = await sql<{ id: string }>`
    insert into workflow_sessions (environment, connect_id, daf_id, frequency, amount, donor, donor_balance, expires_at)
    select 'sandbox', ${connectId}, ${daf.id}::uuid, 'one_time', ${GRANT_CENTS}, '{"firstName":"Bench","lastName":"Donor"}', 2500000,
           now() + interval '1 hour'
      from generate_series(1, ${count})
    returning id`.execute(db);
  return rows.map((r) => r.id);
}

/** One capture per call, each of the next unused session: against Almoner (with the key) or the bare baseline (no key). */
export function captureNext(origin: string, key: string | undefined, sessions: readonly string[]) {
  let n = 0;
  return async () => {
    const session = sessions[n];
    n += 1;
    if (!session) throw new Error('out of authorized sessions: raise the count the scenario prepares');
    await call(origin, key, 'POST', '/v1/grants', [201], { workflowSessionId: session, amount: GRANT_CENTS });
  };
}

/**
 * Connects of the platform, one for each of up to `count` directory nonprofits (one per creator
 * and nonprofit), written as rows: the flow's per-Connect limit counts each apart. Their ids.
 */
export async function benchConnects(db: Db, platform: Platform, count: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    insert into connects (id, environment, organization_id, name, recipient_organization_id)
    select 'test_bench_' || d.ein, 'sandbox', ${platform.organizationId}::uuid, 'Bench page ' || d.ein, d.id
      from (select id, ein from directory_organizations order by ein limit ${count}) as d
    on conflict do nothing
    returning id`.execute(db);
  return rows.map((r) => r.id);
}

type Page = Awaited<ReturnType<FormBrowser['request']>>;

/**
 * One donor of the simulated DAF walking the hosted flow, a page per call (a form's POST and the
 * page its redirect shows are one page to the donor): the start, the DAF chosen, the amount, the
 * simulated sign-in, the authorization. Each donor is a fresh browser at an address of its own
 * (X-Forwarded-For from the trusted loopback proxy), on the next Connect.
 */
export function donorWalks(dashboard: string, connects: readonly string[], simulatedDafId: string) {
  let donors = 0;
  const walkers = new Map<number, { agent: FormBrowser; step: number; page?: Page; cid: string }>();
  const check = (page: Page, path: string) => {
    if (page.status !== 200 || !page.url.pathname.endsWith(path))
      throw new Error(`expected ${path}, got ${page.status} ${page.url.pathname}`);
    return page;
  };
  return async (worker: number) => {
    let walker = walkers.get(worker);
    if (!walker || walker.step === 5) {
      donors += 1;
      const cid = connects[donors % connects.length]!;
      const address = `10.${(donors >> 16) & 255}.${(donors >> 8) & 255}.${donors & 255}`;
      walker = { agent: new FormBrowser((url) => url.origin !== dashboard, { 'x-forwarded-for': address }), step: 0, cid };
      walkers.set(worker, walker);
    }
    const { agent, page } = walker;
    switch (walker.step) {
      case 0:
        walker.page = check(
          await agent.request(`${dashboard}/connect/${walker.cid}?origin=${encodeURIComponent('https://give.example.org')}`),
          walker.cid,
        );
        break;
      case 1:
        walker.page = check(await agent.submit(page!, '/daf', { daf: simulatedDafId }), '/amount');
        break;
      case 2:
        walker.page = check(await agent.submit(page!, '/amount', { amount: String(GRANT_CENTS / 100), frequency: 'one_time' }), '/sign-in');
        break;
      case 3:
        walker.page = check(await agent.submit(page!, '/sign-in', { username: 'bench', password: 'bench' }), '/confirm');
        break;
      default:
        walker.page = check(await agent.submit(page!, '/authorize'), '/done');
    }
    walker.step += 1;
  };
}
