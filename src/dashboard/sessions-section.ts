import type { Context } from 'koa';
import { recordAudit } from '../audit/audit-log.js';
import { destroySessionByUid, endUserSignIns } from '../authorizations/sessions-repository.js';
import { inTransaction } from '../db/executor.js';
import { notFound } from '../errors/domain-error.js';
import { deleteBrowserSession, listBrowserSessions, type BrowserSessionRow } from '../identity/browser-sessions-repository.js';
import { endSession } from '../oidc/interactions/provider-session.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { AccountRequest } from './guards.js';
import { SECURITY_PATH, SESSION_SIGN_OUT_PATH, SIGN_IN_PATH, SIGN_OUT_EVERYWHERE_PATH } from './paths.js';
import type { Viewer } from './viewer.js';

/**
 * The browsers signed in to the account, on the Security page (docs/accounts.md, "Sessions"):
 * where (address and browser), when (signed in, last active), which dashboard, and how; with
 * Sign out for each and Sign out everywhere.
 */

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const METHOD_WORDS: Record<string, string> = { pwd: 'password', otp: 'authenticator app or recovery code', hwk: 'passkey', swk: 'passkey' };

/** "Firefox on Linux" from a User-Agent header: enough to recognise one's own browsers, no more. */
export function browserName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const ua = userAgent;
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /OPR\//.test(ua)
      ? 'Opera'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Chrom(e|ium)\//.test(ua)
          ? 'Chrome'
          : /Safari\//.test(ua)
            ? 'Safari'
            : /^curl\//.test(ua)
              ? 'curl'
              : undefined;
  const system = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad|iOS/.test(ua)
      ? 'iOS'
      : /Windows/.test(ua)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(ua)
          ? 'macOS'
          : /CrOS/.test(ua)
            ? 'ChromeOS'
            : /Linux/.test(ua)
              ? 'Linux'
              : undefined;
  if (!browser) return system ? `A browser on ${system}` : 'Another program';
  return system ? `${browser} on ${system}` : browser;
}

function how(amr: readonly string[]): string {
  const words = [...new Set(amr.map((m) => METHOD_WORDS[m]).filter(Boolean))];
  return words.length === 0 ? 'Signed in' : `With ${words.join(' and ')}`;
}

function sessionView(row: BrowserSessionRow, viewer: Viewer, environment: string) {
  const current = row.environment === environment && row.session_uid === viewer.session.uid;
  return {
    id: row.id,
    current,
    browser: browserName(row.user_agent),
    dashboard: row.environment === 'sandbox' ? 'Sandbox dashboard' : 'Production dashboard',
    address: row.ip ?? 'unknown address',
    how: how(row.amr),
    signedIn: shownDate(row.signed_in_at),
    lastSeen: shownDate(row.last_seen_at),
  };
}

/** The page's data for the list. */
export async function sessionsSection(deps: DashboardDeps, viewer: Viewer) {
  const rows = await listBrowserSessions(deps.db, viewer.user.id);
  return {
    sessions: rows.map((row) => sessionView(row, viewer, deps.environment)).sort((a, b) => Number(b.current) - Number(a.current)),
    sessionSignOutAction: SESSION_SIGN_OUT_PATH,
    signOutEverywhereAction: SIGN_OUT_EVERYWHERE_PATH,
  };
}

function backToSignIn(ctx: Context): void {
  ctx.status = 303;
  ctx.redirect(`${SIGN_IN_PATH}?signed_out=1`);
}

/** POST /account/security/sessions/sign-out: ends one of the user's sessions (form field `session`); this one signs the browser out. */
export async function submitSessionSignOut(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  const id = form.session ?? '';
  if (id === viewer.sessionId) {
    await endSession(deps, ctx, viewer.session);
    await recordAudit(deps.db, {
      event: 'logout',
      environment: deps.environment,
      actorUserId: viewer.user.id,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { via: 'security_page' },
    });
    return backToSignIn(ctx);
  }
  await inTransaction(deps.db, async (trx) => {
    // Another user's session, or one already ended: 404, as if it did not exist.
    const ended = ID.test(id) ? await deleteBrowserSession(trx, viewer.user.id, id) : undefined;
    if (!ended) throw notFound('There is no such session of yours: it may have ended already.');
    await destroySessionByUid(trx, ended.environment, ended.session_uid);
    await recordAudit(trx, {
      event: 'session.ended',
      environment: deps.environment,
      actorUserId: viewer.user.id,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { session_environment: ended.environment, via: 'security_page' },
    });
  });
  ctx.status = 303;
  ctx.redirect(`${SECURITY_PATH}?done=signed-out`);
}

/**
 * POST /account/security/sessions/sign-out-everywhere: every session of the user in both
 * environments ends, this one too, and so does every sign-in in progress (the user's
 * credentials epoch rises). Applications keep the access they were given.
 */
export async function submitSignOutEverywhere(deps: DashboardDeps, ctx: Context, { viewer }: AccountRequest): Promise<void> {
  const ended = await inTransaction(deps.db, async (trx) => {
    const sessionsEnded = await endUserSignIns(trx, viewer.user.id);
    await recordAudit(trx, {
      event: 'session.ended_everywhere',
      environment: deps.environment,
      actorUserId: viewer.user.id,
      ip: ctx.state.clientIp ?? null,
      requestId: ctx.state.requestId ?? null,
      details: { sessions_ended: sessionsEnded },
    });
    return sessionsEnded;
  });
  ctx.state.log?.debug({ sessions_ended: ended }, 'signed out everywhere');
  await endSession(deps, ctx, viewer.session);
  backToSignIn(ctx);
}
