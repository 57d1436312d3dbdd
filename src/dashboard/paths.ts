/** The dashboard hosts' own pages (docs/accounts.md, "Pages"). */
export const SIGN_IN_PATH = '/sign-in';
export const SECOND_FACTOR_PATH = '/sign-in/second-factor';
/** A passkey's answer at sign-in (alone, or after the password), and where the browser asks for its options. */
export const SIGN_IN_PASSKEY_PATH = '/sign-in/passkey';
export const SIGN_IN_PASSKEY_OPTIONS_PATH = '/sign-in/passkey/options';
export const ACCOUNT_PATH = '/account';
export const SECURITY_PATH = '/account/security';
/** "Confirm it is you": a second factor given again, before a change to the factors or to act for an organization that requires one. */
export const CONFIRM_PATH = `${SECURITY_PATH}/confirm`;
export const CONFIRM_PASSKEY_PATH = `${CONFIRM_PATH}/passkey`;
export const CONFIRM_PASSKEY_OPTIONS_PATH = `${CONFIRM_PASSKEY_PATH}/options`;
/** The Security page's signed-in browsers: sign one out (form field `session`), or all of them. */
export const SESSION_SIGN_OUT_PATH = `${SECURITY_PATH}/sessions/sign-out`;
export const SIGN_OUT_EVERYWHERE_PATH = `${SECURITY_PATH}/sessions/sign-out-everywhere`;
export const CONNECTIONS_PATH = '/oauth/connections';
export const REVOKE_PATH = `${CONNECTIONS_PATH}/revoke`;
/** The connections page's own sign-in form target (kept: scripts outside post to it). */
export const CONNECTIONS_SIGN_IN_PATH = `${CONNECTIONS_PATH}/sign-in`;
export const SIGN_OUT_PATH = '/oauth/logout';
/** Asking for a password-reset link (before sign-in), and the link's page: /reset-password/<token>. */
export const FORGOT_PASSWORD_PATH = '/forgot-password';
export const RESET_PASSWORD_PATH = '/reset-password';
/** Changing one's own password (signed in). */
export const ACCOUNT_PASSWORD_PATH = '/account/password';

/** An organization's pages: /orgs/<EIN>/<page>. */
export function orgPath(ein: string, page = ''): string {
  return `/orgs/${ein}${page ? `/${page}` : ''}`;
}

/** Pages a sign-in may return to: this host's own signed-in pages, never another origin. */
const RETURN_PREFIXES = [ACCOUNT_PATH, CONNECTIONS_PATH, '/orgs/', '/invitations/'];

/**
 * Where to go after signing in: `next` when it is one of our own pages (a path, not `//host`
 * nor `/\host`, within the known prefixes), the account page otherwise.
 */
export function safeReturnPath(next: unknown): string {
  if (typeof next !== 'string' || next.length > 512 || !next.startsWith('/') || next.startsWith('//') || /[\\\s]/.test(next))
    return ACCOUNT_PATH;
  return RETURN_PREFIXES.some(
    (prefix) => next === prefix || next.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`) || next.startsWith(`${prefix}?`),
  )
    ? next
    : ACCOUNT_PATH;
}
