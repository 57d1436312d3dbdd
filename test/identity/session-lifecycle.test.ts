import type { Context } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  endSession,
  signedInSession,
  startSession,
  stepUpSession,
  type SessionStore,
  type StoredSession,
} from '../../src/identity/session-lifecycle.js';
import { proofFor, SESSION_SECONDS } from '../../src/identity/sessions.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';

/**
 * identity/session-lifecycle.ts over a store of its own: what a sign-in, a step-up and a
 * sign-out do, in order, and the session records they keep in Postgres, without the
 * authorization server (its store over oidc-provider is held by test/oidc/provider-internals.test.ts,
 * "the provider's session and its cookie: ..."; the dashboard's browser tests use both together).
 */

let t: TestDatabase;
let staff: Staff;
beforeAll(async () => {
  t = await createTestDatabase();
  staff = await createStaff(t.db);
});
afterAll(async () => t?.drop());

/** A store that keeps sessions in a map and the browser's cookie in a variable, and logs what is done to them. */
function memoryStore() {
  const saved = new Map<string, MemorySession>();
  const log: string[] = [];
  let cookie: string | null = null;
  let next = 0;
  class MemorySession implements StoredSession {
    readonly uid = `uid-${++next}`;
    readonly id = `id-${next}`;
    exp?: number;
    constructor(
      readonly accountId: string | undefined,
      public amr: StoredSession['amr'],
      public acr: string | undefined,
    ) {}
    async save(ttl: number) {
      this.exp = Math.floor(Date.now() / 1000) + ttl;
      saved.set(this.id, this);
      log.push(`save ${this.uid} ${ttl}`);
    }
    async destroy() {
      saved.delete(this.id);
      log.push(`destroy ${this.uid}`);
    }
  }
  const store: SessionStore<MemorySession> = {
    async find() {
      return cookie ? saved.get(cookie) : undefined;
    },
    create(login) {
      log.push(`create ${login.accountId} ${login.amr.join('+')} ${login.acr}`);
      return new MemorySession(login.accountId, login.amr, login.acr);
    },
    setCookie(_ctx, session, maxAge) {
      cookie = session ? session.id : null;
      log.push(`cookie ${session?.uid ?? 'cleared'}${maxAge ? ` ${maxAge}` : ''}`);
    },
  };
  return { store, log, saved };
}

const request = () => ({ state: {}, get: () => 'a browser' }) as unknown as Context;
const records = (uid: string) =>
  t.db.selectFrom('browser_sessions').select(['session_uid', 'amr']).where('session_uid', '=', uid).execute();

describe('the session lifecycle (identity/session-lifecycle.ts)', () => {
  it('a sign-in replaces the session the cookie named, records the new one before saving it, then points the cookie at it', async () => {
    const { store, log } = memoryStore();
    const deps = { db: t.db, environment: 'production' as const, store };
    await startSession(deps, request(), proofFor({ id: staff.users.member.id, credentials_epoch: 0 }, ['pwd']));
    const first = await signedInSession(deps, request());
    expect(first?.accountId).toBe(staff.users.member.id);
    expect(await records(first!.uid)).toHaveLength(1);

    await startSession(deps, request(), proofFor({ id: staff.users.member.id, credentials_epoch: 0 }, ['pwd', 'otp']));
    const second = await signedInSession(deps, request());
    expect(second!.uid).not.toBe(first!.uid);
    // The old session and its record are gone; the new one is recorded.
    expect(await records(first!.uid)).toEqual([]);
    expect(await records(second!.uid)).toHaveLength(1);
    expect(log.slice(3)).toEqual([
      `destroy ${first!.uid}`,
      `create ${staff.users.member.id} pwd+otp ${second!.acr}`,
      `save ${second!.uid} ${SESSION_SECONDS}`,
      `cookie ${second!.uid} ${SESSION_SECONDS}`,
    ]);
  });

  it('a step-up adds the method, raises the acr, keeps the session and its expiry, and records the proof', async () => {
    const { store } = memoryStore();
    const deps = { db: t.db, environment: 'production' as const, store };
    await startSession(deps, request(), proofFor({ id: staff.users.admin.id, credentials_epoch: 0 }, ['pwd']));
    const session = (await signedInSession(deps, request()))!;
    const [acrBefore, exp] = [session.acr, session.exp!];
    await stepUpSession(deps, session, 'otp');
    expect(session.amr).toEqual(['pwd', 'otp']);
    expect(session.acr).not.toBe(acrBefore);
    expect(Math.abs(session.exp! - exp)).toBeLessThanOrEqual(1);
    expect((await signedInSession(deps, request()))?.uid).toBe(session.uid);
    expect(await records(session.uid)).toEqual([{ session_uid: session.uid, amr: ['pwd', 'otp'] }]);
  });

  it('a sign-out ends the session, its record and the cookie', async () => {
    const { store, log } = memoryStore();
    const deps = { db: t.db, environment: 'production' as const, store };
    await startSession(deps, request(), proofFor({ id: staff.users.owner.id, credentials_epoch: 0 }, ['pwd']));
    const session = (await signedInSession(deps, request()))!;
    await endSession(deps, request(), session);
    expect(await signedInSession(deps, request())).toBeUndefined();
    expect(await records(session.uid)).toEqual([]);
    expect(log.slice(-2)).toEqual([`destroy ${session.uid}`, 'cookie cleared']);
  });
});
