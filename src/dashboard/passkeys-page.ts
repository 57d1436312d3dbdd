import type { Context } from 'koa';
import { readForm } from '../http/form-body.js';
import { addSessionMethod } from '../oidc/interactions/provider-session.js';
import { notFound } from '../errors/domain-error.js';
import { noticeSecondFactorChange } from '../mfa/notices.js';
import { rememberChallenge, takeBrowserChallenge } from '../mfa/passkey-challenge.js';
import { passkeyName, registerPasskey, registrationOptions, relyingParty, removePasskey } from '../mfa/passkeys.js';
import type { DashboardDeps } from './deps.js';
import { requireViewer, verifySessionCsrf } from './guards.js';
import { sendDashboardPage } from './page.js';
import { SECURITY_PATH } from './paths.js';
import { passwordConfirmed } from './reauthentication.js';
import { renderSecurity } from './security-page.js';

/**
 * Passkeys on the Security page (docs/oauth.md, "Second factors and step-up"): adding one
 * (named by the user, made by the browser through /static/passkeys.js) and removing one with
 * the password typed again. The first second factor comes with recovery codes.
 */

/** POST /account/security/passkeys/options: the options for the browser's WebAuthn call (JSON). */
export async function passkeyRegistrationOptions(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, SECURITY_PATH);
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  if (!relyingParty(deps)) throw notFound('Passkeys need the dashboard at a domain name.');
  passkeyName(form.name);
  const options = await registrationOptions(deps, viewer.user);
  await rememberChallenge(deps, ctx, 'register', options.challenge, viewer.user.id);
  ctx.body = options;
}

/** POST /account/security/passkeys: the new passkey, under the name typed. */
export async function submitPasskeyRegistration(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, SECURITY_PATH);
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  const name = passkeyName(form.name);
  const challenge = await takeBrowserChallenge(deps, ctx, 'register');
  const registered = challenge && challenge.user_id === viewer.user.id ? await registerPasskey(deps, viewer.user.id, challenge.challenge, name, form.response) : { ok: false as const };
  if (!registered.ok) return renderSecurity(deps, ctx, viewer, { passkeyError: 'The passkey was not added. Try again; if it keeps failing, try another device or browser.', passkeyName: name, status: 400 });
  await addSessionMethod(viewer.session, registered.method);
  noticeSecondFactorChange(deps, ctx, viewer.user.email, 'added', `a passkey (“${name}”)`);
  if (!registered.recoveryCodes) {
    ctx.status = 303;
    ctx.redirect(`${SECURITY_PATH}?done=passkey-added`);
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(deps, ctx, viewer, 'dashboard/recovery-codes.njk', 'security', { heading: 'Your passkey is ready', codes: registered.recoveryCodes, continueHref: SECURITY_PATH });
}

/** POST /account/security/passkeys/remove: one passkey (form field `id`), with the password typed again. */
export async function submitPasskeyRemoval(deps: DashboardDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const viewer = await requireViewer(deps, ctx, SECURITY_PATH);
  if (!viewer) return;
  verifySessionCsrf(deps, ctx, viewer, form);
  if (!(await passwordConfirmed(deps, viewer, form.password ?? ''))) return renderSecurity(deps, ctx, viewer, { passkeyError: 'That is not your password. The passkey is still there.', status: 401 });
  const name = await removePasskey(deps, viewer.user.id, form.id ?? '');
  if (name === undefined) throw notFound('You have no such passkey.');
  noticeSecondFactorChange(deps, ctx, viewer.user.email, 'removed', `the passkey “${name}”`);
  ctx.status = 303;
  ctx.redirect(`${SECURITY_PATH}?done=passkey-removed`);
}
