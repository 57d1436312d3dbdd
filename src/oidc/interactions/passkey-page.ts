import type { Context } from 'koa';
import { loginResult, passkeyProof } from '../../identity/sessions.js';
import { recordAudit } from '../../audit/audit-log.js';
import { readForm } from '../../http/form-body.js';
import { rememberChallenge, takeBrowserChallenge } from '../../mfa/passkey-challenge.js';
import { authenticationOptions, checkPasskey, relyingParty } from '../../mfa/passkeys.js';
import { clearPendingSignIn, pendingSignIn } from '../../identity/pending-sign-in.js';
import { passkeyFailure, passwordlessFailure } from '../../mfa/second-factor-words.js';
import { notFound } from '../../errors/domain-error.js';
import { finishInteraction, loadInteraction, paths, verifyInteractionCsrf, type Interaction, type InteractionDeps } from './interaction.js';
import { showLogin } from './login-page.js';
import { detachFromSession } from './provider-session.js';
import { chosenOrganization, pendingPurpose, showCodePage, stepUpResult } from './second-factor-page.js';
import { PASSKEY_SIGN_IN_FAILED } from '../../identity/sign-in-messages.js';

/**
 * Passkeys in the authorization flow (docs/oauth.md, "Second factors and step-up"), three
 * ways, by where the flow is: at sign-in with no password typed, the passkey signs in alone
 * (user verification required); after a password, it is the second factor; at a step-up, it
 * confirms the signed-in user. Either way the login result carries amr hwk or swk and acr
 * loa:2, so the session and the ID token say how.
 */

/** Whose passkey the flow wants now: the waiting sign-in's user, the session's (step-up), or anybody's (null). */
async function expectedUser(deps: InteractionDeps, ctx: Context, interaction: Interaction) {
  if (interaction.prompt.name === 'login') {
    const pending = await pendingSignIn(deps, ctx, pendingPurpose(interaction));
    return { userId: pending?.userId ?? null, pending };
  }
  return { userId: interaction.session?.accountId ?? null, pending: undefined };
}

/** POST /oauth/interaction/:uid/passkey/options: the options for the browser's WebAuthn call (JSON). */
export async function passkeyOptions(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  if (!relyingParty(deps)) throw notFound('Passkeys need the dashboard at a domain name.');
  const { userId } = await expectedUser(deps, ctx, interaction);
  const options = await authenticationOptions(deps, userId);
  await rememberChallenge(deps, ctx, 'authenticate', options.challenge, userId);
  ctx.body = options;
}

/** POST /oauth/interaction/:uid/passkey: the passkey's answer. */
export async function submitPasskey(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  const { userId: expected, pending } = await expectedUser(deps, ctx, interaction);
  const challenge = await takeBrowserChallenge(deps, ctx, 'authenticate');
  const organization = chosenOrganization(form);
  const check = challenge && challenge.user_id === expected ? await checkPasskey(deps, challenge, form.response) : { ok: false as const };
  const audit = {
    environment: deps.environment,
    ip: ctx.state.clientIp || null,
    requestId: ctx.state.requestId ?? null,
    clientId: String(interaction.params.client_id ?? '') || null,
  };

  if (interaction.prompt.name === 'login' && expected === null) {
    // A passwordless sign-in: the passkey is the only factor.
    if (!check.ok) {
      await recordAudit(deps.db, { ...audit, event: 'login.failed', details: { method: 'passkey' } });
      return showLogin(
        deps,
        ctx,
        interaction,
        { error: passwordlessFailure(check.retryAfterSeconds) ?? PASSKEY_SIGN_IN_FAILED, retryAfterSeconds: check.retryAfterSeconds },
        check.retryAfterSeconds ? 429 : 401,
      );
    }
    await recordAudit(deps.db, { ...audit, event: 'login.succeeded', actorUserId: check.userId, details: { method: 'passkey' } });
    if (interaction.session?.accountId && interaction.session.accountId !== check.userId) await detachFromSession(deps, interaction);
    const proof = await passkeyProof(deps.db, check.userId, check.method);
    return finishInteraction(ctx, interaction, { login: loginResult(proof) });
  }
  if (expected === null) {
    ctx.status = 303;
    ctx.redirect(paths(interaction).page);
    return;
  }
  const signingIn = interaction.prompt.name === 'login';
  if (!check.ok)
    return showCodePage(
      deps,
      ctx,
      interaction,
      expected,
      {
        error: passkeyFailure(check.retryAfterSeconds),
        retryAfterSeconds: check.retryAfterSeconds,
        reasons: signingIn ? undefined : [],
        organization,
      },
      check.retryAfterSeconds ? 429 : 401,
    );
  if (signingIn && pending) {
    clearPendingSignIn(deps, ctx);
    if (interaction.session?.accountId && interaction.session.accountId !== expected) await detachFromSession(deps, interaction);
    return finishInteraction(ctx, interaction, {
      login: loginResult({ userId: expected, epoch: pending.epoch, amr: ['pwd', check.method], at: new Date() }),
    });
  }
  await finishInteraction(ctx, interaction, { login: await stepUpResult(deps, ctx, interaction, expected, check.method), organization });
}
