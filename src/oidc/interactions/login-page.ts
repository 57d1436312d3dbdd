import type { Context } from 'koa';
import { readForm } from '../../http/form-body.js';
import { unitOf } from '../request-scope.js';
import { writeWithUnit } from '../unit-of-work.js';
import { detachFromSession } from './provider-session.js';
import {
  clientView,
  finishInteraction,
  interactionCsrf,
  loadInteraction,
  paths,
  redirectUri,
  sendInteractionPage,
  verifyInteractionCsrf,
  type Interaction,
  type InteractionDeps,
} from './interaction.js';
import { lockoutMessage, SIGN_IN_FAILED } from '../../identity/sign-in-messages.js';
import { askSecondFactorAtLogin } from './second-factor-page.js';
import { loginResult, proofFor } from '../../identity/sessions.js';
import { passkeyForm } from '../../mfa/passkey-form.js';

export interface LoginForm {
  error?: string;
  email?: string;
  retryAfterSeconds?: number;
}

export async function showLogin(
  deps: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  form: LoginForm = {},
  status?: number,
): Promise<void> {
  if (form.retryAfterSeconds) ctx.set('Retry-After', String(form.retryAfterSeconds));
  const p = paths(interaction);
  const client = await deps.provider().Client.find(String(interaction.params.client_id));
  sendInteractionPage(
    deps,
    ctx,
    interaction,
    'login.njk',
    {
      client: client ? clientView(client, redirectUri(interaction)) : undefined,
      action: p.login,
      csrf: interactionCsrf(deps, interaction),
      error: form.error,
      lockedOut: Boolean(form.retryAfterSeconds),
      email: form.email ?? (typeof interaction.params.login_hint === 'string' ? interaction.params.login_hint : ''),
      reauthenticate: interaction.prompt.reasons.includes('login_prompt') && Boolean(interaction.session?.accountId),
      // The dashboard's forgot-password page is on this same host (docs/accounts.md, "Password reset").
      forgotHref: '/forgot-password',
      passkeyForm: passkeyForm(deps, { action: p.passkey, optionsAction: p.passkeyOptions, label: 'Sign in with a passkey' }),
    },
    status,
  );
}

/** POST /oauth/interaction/:uid/login */
export async function submitLogin(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  if (interaction.prompt.name !== 'login') {
    // Already signed in (a second tab, a double submission): carry on from the flow's page.
    ctx.status = 303;
    ctx.redirect(paths(interaction).page);
    return;
  }
  const outcome = await deps.signIn.attempt(
    {
      email: form.email ?? '',
      password: form.password ?? '',
      ip: ctx.state.clientIp ?? '',
      environment: deps.environment,
      requestId: ctx.state.requestId ?? null,
      clientId: String(interaction.params.client_id ?? '') || null,
      commit: (work) => writeWithUnit(unitOf(ctx), deps.db, work),
    },
    ctx.state.log,
  );
  if (outcome.kind === 'invalid') return showLogin(deps, ctx, interaction, { error: SIGN_IN_FAILED, email: form.email }, 401);
  if (outcome.kind === 'locked_out')
    return showLogin(
      deps,
      ctx,
      interaction,
      { error: lockoutMessage(outcome.retryAfterSeconds), email: form.email, retryAfterSeconds: outcome.retryAfterSeconds },
      429,
    );
  if (await askSecondFactorAtLogin(deps, ctx, interaction, outcome.user)) return;
  if (interaction.session?.accountId && interaction.session.accountId !== outcome.user.id) await detachFromSession(deps, interaction);
  await finishInteraction(ctx, interaction, { login: loginResult(proofFor(outcome.user, ['pwd'])) });
}
