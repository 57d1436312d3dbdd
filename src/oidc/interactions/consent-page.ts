import type { Context } from 'koa';
import { invalid } from '../../errors/domain-error.js';
import { errors } from 'oidc-provider';
import { recordAudit } from '../../audit/audit-log.js';
import { unitOf } from '../request-scope.js';
import { recordConsentApproval } from '../consent-approval.js';
import { userIdentity } from '../request-account.js';
import { readForm } from '../../http/form-body.js';
import { planConsent, type ConsentPlan } from '../consent-plan.js';
import { clientRequiresMfa, consentForced, findCoveringGrant, subjectTypeOf } from '../existing-grant.js';
import { hasSecondFactor } from '../../accounts/authentication-methods.js';
import { stepUpReasons } from '../../mfa/step-up.js';
import { showStepUp } from './second-factor-page.js';
import {
  clientView,
  finishInteraction,
  interactionCsrf,
  loadInteraction,
  paths,
  redirectUri,
  sendInteractionPage,
  takePushedRequest,
  verifyInteractionCsrf,
  type Interaction,
  type InteractionDeps,
} from './interaction.js';
import { membershipsOf, resolveOrganization } from './organization-page.js';
import { KIND_LABELS, ROLE_NAMES, type Membership } from '../../identity/memberships.js';
import { describeScopes } from './scope-descriptions.js';
import { accountField, chosenAccounts, fdxConsentStep, missingConsentRequest } from './fdx-consent-step.js';
import { isFapi2Client } from '../client-metadata.js';
import { newFdxConsentId } from '../../authorizations/fdx-consents.js';
import { FDX_AUTHORIZATION_DETAILS_TYPE } from '../../authorizations/fdx-consent-request.js';
import { consentExpiry } from '../../authorizations/fdx-consent.js';
import type { GrantedFdxDetail } from '../fdx-authorization-details.js';

function requestedScopes(interaction: Interaction): string[] {
  return String(interaction.params.scope ?? '').split(' ');
}

/** Why approving needs a second factor this session has not shown yet (none: it does not). */
function owedStepUp(interaction: Interaction, client: object, membership: Membership, plan: ConsentPlan): string[] {
  if (!plan.canApprove || hasSecondFactor(interaction.session?.amr)) return [];
  return stepUpReasons({
    granted: plan.granted,
    clientRequiresMfa: clientRequiresMfa(client),
    organization: membership,
    acrValues: interaction.params.acr_values,
  });
}

function planFor(
  interaction: Interaction,
  client: { scope?: string },
  membership: Membership,
  subjectType: ReturnType<typeof subjectTypeOf>,
): ConsentPlan {
  return planConsent(requestedScopes(interaction), String(client.scope ?? '').split(' '), membership.role, subjectType, membership.kind);
}

/**
 * GET /oauth/interaction/:uid once signed in: the organization choice when needed, then either
 * straight back to the application (a live authorization covers the request and
 * prompt=consent was not asked for) or the consent screen.
 */
export async function showConsentStep(deps: InteractionDeps, ctx: Context, interaction: Interaction, problem?: string): Promise<void> {
  const provider = deps.provider();
  const userId = interaction.session?.accountId;
  const user = userId ? await userIdentity(deps.db, userId, unitOf(ctx)) : undefined;
  const client = await provider.Client.find(String(interaction.params.client_id));
  // The account or the application went away during the flow: start again, or stop here.
  if (!user || user.disabled_at) throw new errors.SessionNotFound('the signed-in account no longer exists');
  if (!client)
    throw invalid('The application that sent you here is no longer registered with us. Nothing was shared with it.', {
      title: 'Unknown application',
    });
  const view = clientView(client, redirectUri(interaction));
  const memberships = await membershipsOf(deps, ctx, user.id);
  const who = { email: user.email, name: user.display_name };
  const membership = await resolveOrganization(deps, ctx, interaction, memberships, view, who);
  if (!membership) return;
  const subjectType = subjectTypeOf(client);
  const plan = planFor(interaction, client, membership, subjectType);
  const stepUp = owedStepUp(interaction, client, membership, plan);
  if (stepUp.length > 0) return showStepUp(deps, ctx, interaction, user.id, membership.id, stepUp);
  const fdx = await fdxConsentStep(deps.db, deps.environment, membership.id, interaction.params);
  const missing = missingConsentRequest(isFapi2Client(client), plan.granted, fdx);
  // An FDX consent request is always a new consent (its own accounts, clusters and clock).
  if (!consentForced(interaction.params.prompt) && !fdx && !missing) {
    const covering = await findCoveringGrant(deps.db, provider, deps.environment, {
      clientId: client.clientId,
      userId: user.id,
      organizationId: membership.id,
      plan,
    });
    if (covering) return finishInteraction(ctx, interaction, { consent: { grantId: covering.jti } });
  }
  const p = paths(interaction);
  const page = {
    client: view,
    user: who,
    organization: membership,
    kind: KIND_LABELS[membership.kind],
    roleName: ROLE_NAMES[membership.role],
    subjectType,
    plan,
    granted: describeScopes(plan.granted, membership.kind),
    // Withheld by the role, and (said apart) what the organization has nothing for.
    withheld: describeScopes(
      plan.withheld.filter((s) => !plan.notApplicable.includes(s)),
      membership.kind,
    ),
    notApplicable: describeScopes(plan.notApplicable, membership.kind),
    action: p.consent,
    denyAction: p.deny,
    // Back to the organization choice, when there was one.
    changeOrganization: memberships.length > 1 ? p.page : undefined,
    csrf: interactionCsrf(deps, interaction),
    fdx: fdx && { ...fdx, accounts: fdx.accounts.map((a) => ({ ...a, field: accountField(a.id) })) },
    canApprove: plan.canApprove && !fdx?.refusal && !missing,
    refusal: plan.refusal ?? fdx?.refusal ?? missing,
    problem,
  };
  sendInteractionPage(deps, ctx, interaction, 'consent.njk', page, problem ? 400 : undefined);
}

/** POST /oauth/interaction/:uid/consent: decided again from current data, never from the page. */
export async function approve(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  const provider = deps.provider();
  const userId = interaction.session?.accountId;
  const client = await provider.Client.find(String(interaction.params.client_id));
  const membership = userId ? (await membershipsOf(deps, ctx, userId)).find((m) => m.id === form.organization) : undefined;
  const back = () => {
    ctx.status = 303;
    ctx.redirect(paths(interaction).page);
  };
  if (interaction.prompt.name !== 'consent' || !userId || !client || !membership) return back();
  const subjectType = subjectTypeOf(client);
  const plan = planFor(interaction, client, membership, subjectType);
  if (!plan.canApprove || owedStepUp(interaction, client, membership, plan).length > 0) return back();
  const fdx = await fdxConsentStep(deps.db, deps.environment, membership.id, interaction.params);
  if (fdx?.refusal || missingConsentRequest(isFapi2Client(client), plan.granted, fdx)) return back();
  const accountIds = fdx ? chosenAccounts(fdx, form) : [];
  // Nothing picked cannot be approved: the same screen again, saying so.
  if (fdx?.asksForAccounts && accountIds.length === 0)
    return showConsentStep(deps, ctx, interaction, 'Choose at least one account to share, or deny the request.');

  const grant = new provider.Grant({ accountId: userId, clientId: client.clientId });
  grant.addOIDCScope(plan.granted.join(' '));
  if (plan.withheld.length > 0) grant.rejectOIDCScope(plan.withheld.join(' '));
  const consentId = fdx ? newFdxConsentId() : undefined;
  const grantedAt = new Date();
  // The tokens carry the consent's id in their authorization_details; its end caps their refresh tokens (fdx-authorization-details.ts).
  if (fdx && consentId) {
    const consentEnds = Math.floor(consentExpiry(fdx.request, grantedAt).getTime() / 1000);
    grant.addRar({
      type: FDX_AUTHORIZATION_DETAILS_TYPE,
      consentId,
      consentRequest: fdx.request,
      consentEnds,
    } satisfies GrantedFdxDetail as never);
  }
  const grantId = await grant.save();
  await recordConsentApproval(unitOf(ctx), deps.db, {
    environment: deps.environment,
    grantId,
    clientId: client.clientId,
    subjectType,
    userId,
    organizationId: membership.id,
    granted: plan.granted,
    withheld: plan.withheld,
    // Used up by this approval; the resume then has no pushed request left to look up.
    pushedRequest: takePushedRequest(interaction),
    fdx: fdx && consentId ? { consentId, createdAt: grantedAt, request: fdx.request, accountIds } : undefined,
    trace: { ip: ctx.state.clientIp ?? null, requestId: ctx.state.requestId ?? null },
  });
  await finishInteraction(ctx, interaction, { consent: { grantId } });
}

/** POST /oauth/interaction/:uid/deny: back to the application with access_denied and its state. */
export async function deny(deps: InteractionDeps, ctx: Context): Promise<void> {
  const interaction = await loadInteraction(deps, ctx);
  const form = await readForm(ctx);
  verifyInteractionCsrf(deps, ctx, interaction, form);
  await recordAudit(deps.db, {
    event: 'consent.denied',
    environment: deps.environment,
    actorUserId: interaction.session?.accountId ?? null,
    clientId: String(interaction.params.client_id ?? '') || null,
    ip: ctx.state.clientIp ?? null,
    requestId: ctx.state.requestId ?? null,
    details: { scopes: requestedScopes(interaction).filter(Boolean) },
  });
  await finishInteraction(ctx, interaction, { error: 'access_denied', error_description: 'The user denied the request.' });
}
