import type { Context } from 'koa';
import type { AuthenticationMethod } from '../../accounts/authentication-methods.js';
import type { User } from '../../db/schema.js';
import { loginResult, proofFor } from '../../identity/sessions.js';
import { readForm } from '../../http/form-body.js';
import {
  beginTotpEnrolment,
  checkSecondFactorCode,
  confirmTotp,
  hasEnrolledSecondFactor,
  secondFactorSummary,
} from '../../mfa/second-factors.js';
import { passkeyForm } from '../../mfa/passkey-form.js';
import { countPasskeysHere } from '../../mfa/passkeys.js';
import { clearPendingSignIn, pendingSignIn, setPendingSignIn } from '../../identity/pending-sign-in.js';
import { userIdentity } from '../request-account.js';
import { unitOf } from '../request-scope.js';
import { totpIssuer, codeFailure } from '../../mfa/second-factor-words.js';
import { detachFromSession } from './provider-session.js';
import { noticeSecondFactorChange } from '../../mfa/notices.js';
import {
  clientView,
  interactionCsrf,
  finishInteraction,
  loadInteraction,
  paths,
  redirectUri,
  sendInteractionPage,
  verifyInteractionCsrf,
  type Interaction,
  type InteractionDeps,
} from './interaction.js';

/**
 * The authorization flow's second factor (docs/oauth.md, "Second factors and step-up"):
 * after the password of a user who has one (no session until the code is right), and as a
 * step-up before approving what needs one — with the setup of an authenticator app first
 * when the user has none. A right code goes to the provider as the login result, so the
 * session (and the ID token) carry `amr` and `acr` from the library's own path.
 */

export function pendingPurpose(interaction: Interaction) {
  return `interaction:${interaction.uid}` as const;
}

/** The organization id the step-up form carried (a membership is checked again at consent). */
export function chosenOrganization(form: Record<string, string>): string | undefined {
  return /^[0-9a-f-]{36}$/.test(form.organization ?? '') ? form.organization : undefined;
}

/** The session's methods with the second factor just given. */
export function withSecondFactor(amr: readonly string[] | undefined, method: AuthenticationMethod): AuthenticationMethod[] {
  const methods = new Set<AuthenticationMethod>([...((amr ?? ['pwd']) as AuthenticationMethod[]), method]);
  return [...methods];
}

/**
 * The login result of a step-up: the signed-in user (as this request read them, so at their
 * current credentials epoch: the session was checked to still count) with the session's
 * methods and the second factor just given (docs/accounts.md, "Sessions").
 */
export async function stepUpResult(
  deps: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  userId: string,
  method: AuthenticationMethod,
) {
  const user = await userIdentity(deps.db, userId, unitOf(ctx));
  return loginResult(
    proofFor({ id: userId, credentials_epoch: user?.credentials_epoch ?? -1 }, withSecondFactor(interaction.session?.amr, method)),
  );
}

export interface CodeState {
  /** The organization chosen before the step-up, carried to the consent that follows. */
  organization?: string;
  reasons?: string[];
  error?: string;
  retryAfterSeconds?: number;
}

/** The second-factor page of `userId`: the code form, and a passkey button when the user has a passkey. */
export async function showCodePage(
  deps: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  userId: string,
  state: CodeState,
  status?: number,
): Promise<void> {
  if (state.retryAfterSeconds) ctx.set('Retry-After', String(state.retryAfterSeconds));
  const client = await deps.provider().Client.find(String(interaction.params.client_id));
  const summary = await secondFactorSummary(deps.db, userId);
  const p = paths(interaction);
  sendInteractionPage(
    deps,
    ctx,
    interaction,
    'second-factor.njk',
    {
      client: client ? clientView(client, redirectUri(interaction)) : undefined,
      heading: state.reasons ? 'Confirm it is you' : 'Enter your second factor',
      reasons: state.reasons,
      action: p.secondFactor,
      csrf: interactionCsrf(deps, interaction),
      organization: state.organization,
      error: state.error,
      totp: summary.totp,
      passkeyForm:
        (await countPasskeysHere(deps, userId)) > 0
          ? passkeyForm(deps, { action: p.passkey, optionsAction: p.passkeyOptions, label: 'Use a passkey' })
          : undefined,
    },
    status,
  );
}

/** After a right password: a user with a second factor is asked for it; the sign-in waits in a cookie. */
export async function askSecondFactorAtLogin(deps: InteractionDeps, ctx: Context, interaction: Interaction, user: User): Promise<boolean> {
  if (!(await hasEnrolledSecondFactor(deps.db, user.id))) return false;
  setPendingSignIn(deps, ctx, user, pendingPurpose(interaction));
  await showCodePage(deps, ctx, interaction, user.id, {});
  return true;
}

/** GET of the flow's page while a sign-in waits for its second factor. */
export async function showPendingSecondFactor(deps: InteractionDeps, ctx: Context, interaction: Interaction): Promise<boolean> {
  const pending = await pendingSignIn(deps, ctx, pendingPurpose(interaction));
  if (!pending) return false;
  await showCodePage(deps, ctx, interaction, pending.userId, {});
  return true;
}

/** The consent step found a second factor owed: the code page, or the app's setup when there is none. */
export async function showStepUp(
  deps: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  userId: string,
  organization: string,
  reasons: string[],
  status?: number,
  error?: string,
): Promise<void> {
  if (await hasEnrolledSecondFactor(deps.db, userId))
    return showCodePage(deps, ctx, interaction, userId, { reasons, organization }, status);
  const user = await userIdentity(deps.db, userId, unitOf(ctx));
  const enrolment = await beginTotpEnrolment(deps, { id: userId, email: user!.email }, totpIssuer(deps.environment));
  const client = await deps.provider().Client.find(String(interaction.params.client_id));
  ctx.set('Cache-Control', 'no-store');
  sendInteractionPage(
    deps,
    ctx,
    interaction,
    'second-factor-setup.njk',
    {
      client: client ? clientView(client, redirectUri(interaction)) : undefined,
      reasons,
      enrolment,
      action: paths(interaction).secondFactorSetup,
      csrf: interactionCsrf(deps, interaction),
      organization,
      error,
    },
    status,
  );
}

/** POST /oauth/interaction/:uid/second-factor: the code of a waiting sign-in or of a step-up. */
export async function submitSecondFactor(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  const signingIn = interaction.prompt.name === 'login';
  const pending = signingIn ? await pendingSignIn(deps, ctx, pendingPurpose(interaction)) : undefined;
  const userId = signingIn ? pending?.userId : interaction.session?.accountId;
  if (!userId) {
    ctx.status = 303;
    ctx.redirect(paths(interaction).page);
    return;
  }
  const check = await checkSecondFactorCode(deps, userId, form.code ?? '');
  const organization = chosenOrganization(form);
  if (!check.ok)
    return showCodePage(
      deps,
      ctx,
      interaction,
      userId,
      {
        error: codeFailure(check.retryAfterSeconds, check.used),
        retryAfterSeconds: check.retryAfterSeconds,
        reasons: signingIn ? undefined : [],
        organization,
      },
      check.retryAfterSeconds ? 429 : 401,
    );
  if (pending) {
    clearPendingSignIn(deps, ctx);
    if (interaction.session?.accountId && interaction.session.accountId !== userId) await detachFromSession(deps, interaction);
    return finishInteraction(ctx, interaction, {
      login: loginResult({ userId, epoch: pending.epoch, amr: ['pwd', check.method], at: new Date() }),
    });
  }
  await finishInteraction(ctx, interaction, { login: await stepUpResult(deps, ctx, interaction, userId, 'otp'), organization });
}

/**
 * POST /oauth/interaction/:uid/second-factor/setup: the first code from the new app. Right,
 * the app is set up, the step-up is done, and the recovery codes are shown once before the
 * flow goes on (the page links to where the provider resumes).
 */
export async function submitSecondFactorSetup(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  const userId = interaction.session?.accountId;
  if (interaction.prompt.name !== 'consent' || !userId) {
    ctx.status = 303;
    ctx.redirect(paths(interaction).page);
    return;
  }
  const organization = chosenOrganization(form);
  // Only a user with no second factor sets one up here; one who has a factor gives it instead
  // (adding another needs the existing one: docs/accounts.md, "Second factors").
  if (await hasEnrolledSecondFactor(deps.db, userId))
    return showCodePage(deps, ctx, interaction, userId, { reasons: [], organization }, 409);
  const confirmed = await confirmTotp(deps, userId, form.code ?? '', 'first');
  if (!confirmed.ok && confirmed.hasFactor) return showCodePage(deps, ctx, interaction, userId, { reasons: [], organization }, 409);
  if (!confirmed.ok)
    return showStepUp(
      deps,
      ctx,
      interaction,
      userId,
      organization ?? '',
      [],
      confirmed.retryAfterSeconds ? 429 : 400,
      codeFailure(confirmed.retryAfterSeconds, confirmed.used),
    );
  const user = await userIdentity(deps.db, userId, unitOf(ctx));
  if (user) noticeSecondFactorChange(deps, ctx, user.email, 'added', 'an authenticator app');
  // The user had no second factor to ask for: the code that confirmed the new app is this
  // sign-in's second factor (docs/oauth.md, "Second factors and step-up").
  interaction.result = { ...interaction.lastSubmission, login: await stepUpResult(deps, ctx, interaction, userId, 'otp'), organization };
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
  const client = await deps.provider().Client.find(String(interaction.params.client_id));
  ctx.set('Cache-Control', 'no-store');
  sendInteractionPage(deps, ctx, interaction, 'recovery-codes.njk', {
    client: client ? clientView(client, redirectUri(interaction)) : undefined,
    // A first factor always comes with its recovery codes.
    codes: confirmed.recoveryCodes ?? [],
    continueHref: interaction.returnTo,
    continueLabel: client ? `Continue to ${client.clientName ?? 'the application'}` : 'Continue',
  });
}
