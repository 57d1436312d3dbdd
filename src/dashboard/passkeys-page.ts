import type { Context } from 'koa';
import { forbidden, notFound } from '../errors/domain-error.js';
import { addPasskey, mayChangeFactors, removeOnePasskey } from '../identity/factors.js';
import { rememberChallenge, takeBrowserChallenge } from '../mfa/passkey-challenge.js';
import { passkeyName, registrationOptions, relyingParty } from '../mfa/passkeys.js';
import type { DashboardDeps } from './deps.js';
import type { AccountRequest } from './guards.js';
import { sendDashboardPage } from './page.js';
import { SECURITY_PATH } from './paths.js';
import { passwordConfirmed } from './reauthentication.js';
import { confirmFirst, factorActor, renderSecurity } from './security-page.js';

/**
 * Passkeys on the Security page (docs/accounts.md, "Second factors"): adding one (named by the
 * user, made by the browser through /static/passkeys.js) and removing one with the password
 * typed again, both after a recent second factor when the user has one. The first second
 * factor comes with recovery codes.
 */

/** POST /account/security/passkeys/options: the options for the browser's WebAuthn call (JSON). */
export async function passkeyRegistrationOptions(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  if (!relyingParty(deps)) throw notFound('Passkeys need the dashboard at a domain name.');
  // The page offers the button only after a recent second factor; a script calling anyway is refused.
  if (!(await mayChangeFactors(deps.db, factorActor(deps, viewer))))
    throw forbidden('Confirm it is you with your second factor first.', { title: 'Confirm it is you first' });
  passkeyName(form.name);
  const options = await registrationOptions(deps, viewer.user);
  await rememberChallenge(deps, ctx, 'register', options.challenge, viewer.user.id);
  ctx.body = options;
}

/** POST /account/security/passkeys: the new passkey, under the name typed. */
export async function submitPasskeyRegistration(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  const name = passkeyName(form.name);
  const challenge = await takeBrowserChallenge(deps, ctx, 'register');
  const registered =
    challenge && challenge.user_id === viewer.user.id
      ? await addPasskey(deps, ctx, factorActor(deps, viewer), { challenge: challenge.challenge, name, response: form.response })
      : { ok: false as const };
  if (!registered.ok)
    return renderSecurity(deps, ctx, viewer, {
      passkeyError: 'The passkey was not added. Try again; if it keeps failing, try another device or browser.',
      passkeyName: name,
      status: 400,
    });
  if (!registered.recoveryCodes) {
    ctx.status = 303;
    ctx.redirect(`${SECURITY_PATH}?done=passkey-added`);
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  sendDashboardPage(deps, ctx, viewer, 'dashboard/recovery-codes.njk', 'security', {
    heading: 'Your passkey is ready',
    codes: registered.recoveryCodes,
    continueHref: SECURITY_PATH,
  });
}

/** POST /account/security/passkeys/remove: one passkey (form field `id`), with a recent second factor and the password typed again. */
export async function submitPasskeyRemoval(deps: DashboardDeps, ctx: Context, { viewer, form }: AccountRequest): Promise<void> {
  if (await confirmFirst(deps, ctx, viewer, SECURITY_PATH)) return;
  if (!(await passwordConfirmed(deps, viewer, form.password ?? '')))
    return renderSecurity(deps, ctx, viewer, { passkeyError: 'That is not your password. The passkey is still there.', status: 401 });
  const name = await removeOnePasskey(deps, ctx, factorActor(deps, viewer), form.id ?? '');
  if (name === undefined) throw notFound('You have no such passkey.');
  ctx.status = 303;
  ctx.redirect(`${SECURITY_PATH}?done=passkey-removed`);
}
