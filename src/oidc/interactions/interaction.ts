import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { takeParJti } from '../provider-internals.js';
import { INTERACTION_PREFIX } from '../routes.js';
import { sendPage } from '../../views/page.js';
import { csrfToken, verifyCsrf } from '../../http/csrf.js';
import type { SignIn } from '../../identity/sign-in.js';
import type { ServerKeys } from '../../keys/server-keys.js';
import type { SecretBox } from '../../keys/secret-box.js';
import type { AttemptCounter } from '../../limits/attempt-counter.js';
import type { MailSender } from '../../mail/sender.js';
import type { BackgroundWork } from '../../http/background-work.js';
import type { PageModels, PageName } from '../../views/models.js';

export interface InteractionDeps {
  db: Db;
  environment: Environment;
  /** The dashboard origin of this environment. */
  origin: string;
  provider: () => Provider;
  /** The rotating server keys (CSRF tokens). */
  serverKeys: ServerKeys;
  signIn: SignIn;
  /** The attempt limits (second-factor codes, resets, …), shared by every process. */
  counter: AttemptCounter;
  /** Seals second-factor secrets at rest. */
  box: SecretBox;
  /** Outgoing mail (account notices, invitations, resets). */
  mail: MailSender;
  /** Work that runs after the response (docs/security.md, "Password reset"); tests drain it. */
  background: BackgroundWork;
  /** The configured passkey_rp_id (unset: this dashboard's host name is the passkeys' RP ID). */
  passkeyRpId?: string;
}

export type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/**
 * The interaction the request's cookie names. The page's uid must be that one: a stale tab
 * of an earlier sign-in gets the "expired" page instead of acting on another interaction.
 */
export async function loadInteraction(deps: InteractionDeps, ctx: Context): Promise<Interaction> {
  const interaction = await deps.provider().interactionDetails(ctx.req, ctx.res);
  if (interaction.uid !== ctx.params.uid) throw new errors.SessionNotFound('the page belongs to another sign-in');
  return interaction;
}

/**
 * The pushed request (its id) the interaction was started from, taken off it: the approval uses
 * it up itself (consent-page.ts), so the resume must not look it up again. This reads and
 * clears oidc-provider's own Interaction.parJti (provider-internals.ts, takeParJti).
 */
export function takePushedRequest(interaction: Interaction): string | undefined {
  return takeParJti(interaction);
}

export function interactionCsrf(deps: InteractionDeps, interaction: Interaction): string {
  return csrfToken(deps.serverKeys, `interaction:${interaction.uid}`);
}

export function verifyInteractionCsrf(deps: InteractionDeps, ctx: Context, interaction: Interaction, form: Record<string, string>): void {
  verifyCsrf(ctx, deps.serverKeys, `interaction:${interaction.uid}`, form.csrf, deps.origin);
}

/**
 * Hands the result to the provider and sends the browser back to its resume endpoint. The
 * interaction this request already loaded (and checked against the cookie) is stored with its
 * result, as provider.interactionResult does, minus its second read. A result that is not an
 * error keeps the earlier steps' (the library's mergeWithLastSubmission): with prompt=login the
 * provider asks for the sign-in again unless the consent's result still carries it.
 */
export async function finishInteraction(ctx: Context, interaction: Interaction, result: Record<string, unknown>): Promise<void> {
  interaction.result = 'error' in result ? result : { ...interaction.lastSubmission, ...result };
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
  ctx.status = 303;
  ctx.redirect(interaction.returnTo);
}

export function paths(interaction: Interaction) {
  const base = `${INTERACTION_PREFIX}/${interaction.uid}`;
  return {
    page: base,
    login: `${base}/login`,
    secondFactor: `${base}/second-factor`,
    secondFactorSetup: `${base}/second-factor/setup`,
    passkey: `${base}/passkey`,
    passkeyOptions: `${base}/passkey/options`,
    consent: `${base}/consent`,
    deny: `${base}/deny`,
  };
}

export function redirectUri(interaction: Interaction): string {
  return String(interaction.params.redirect_uri ?? '');
}

/** A page of the flow: the last redirect after its forms goes to the application. */
export function sendInteractionPage<V extends PageName>(
  deps: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  view: V,
  data: PageModels[V],
  status?: number,
): void {
  sendPage<PageName>(
    ctx,
    deps.environment,
    view,
    { requestId: ctx.state.requestId, ...data },
    { status, formTargets: [redirectUri(interaction)] },
  );
}

export interface ClientView {
  name: string;
  logo: string | undefined;
  initial: string;
  /** Where the browser goes back to, shown so the user can tell the application is genuine. */
  returnHost: string;
}

export function clientView(client: { clientName?: string; logoUri?: string } & object, returnTo: string): ClientView {
  const name = client.clientName ?? 'Unnamed application';
  let returnHost = '';
  try {
    returnHost = new URL(returnTo).host;
  } catch {
    /* shown without it */
  }
  return {
    name,
    logo: client.logoUri?.startsWith('https:') ? client.logoUri : undefined,
    initial: [...name.trim()][0]?.toUpperCase() ?? '?',
    returnHost,
  };
}
