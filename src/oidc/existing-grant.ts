import type Provider from 'oidc-provider';
import type { Configuration, Grant, KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../db/database.js';
import type { Environment, Role, SubjectType } from '../db/schema.js';
import { userMemberships } from './request-account.js';
import { unitOf } from './request-scope.js';
import { hasSecondFactor } from '../accounts/authentication-methods.js';
import { stepUpReasons } from '../mfa/step-up.js';
import { listLiveAuthorizations } from '../authorizations/repository.js';
import { planConsent, type ConsentPlan } from './consent-plan.js';
import { grantedFdxDetail } from './fdx-authorization-details.js';

/** The authorization subject a client was registered with (our extra client metadata). */
export function subjectTypeOf(client: unknown): SubjectType {
  return (client as { authorization_subject?: SubjectType }).authorization_subject === 'organization' ? 'organization' : 'user';
}

/** The clients file's require_mfa: approving this application needs a second factor. */
export function clientRequiresMfa(client: unknown): boolean {
  return (client as { require_mfa?: boolean }).require_mfa === true;
}

/** prompt=consent: the screen is shown even when an existing authorization covers the request. */
export function consentForced(prompt: unknown): boolean {
  return typeof prompt === 'string' && prompt.split(' ').includes('consent');
}

export interface CoveringQuery {
  clientId: string;
  userId: string;
  organizationId: string;
  plan: ConsentPlan;
}

/**
 * The Grant of a live authorization (same user, client, environment and organization, not
 * revoked, not expired, holding no bank-data consent) whose scopes include everything approving
 * now would grant. A new request it covers is answered with it, without asking again.
 */
export async function findCoveringGrant(
  db: Db,
  provider: Provider,
  environment: Environment,
  q: CoveringQuery,
): Promise<Grant | undefined> {
  if (!q.plan.canApprove) return undefined;
  for (const row of await listLiveAuthorizations(db, environment, q)) {
    if (!q.plan.granted.every((scope) => row.scopes.includes(scope))) continue;
    const grant = await provider.Grant.find(row.grant_id);
    if (!grant || grant.accountId !== q.userId || grant.clientId !== q.clientId) continue;
    // A bank-data consent is its request's alone (its accounts, clusters and clock): never handed
    // to another request, which asked for none (docs/bank-data.md, "Consents").
    if (grantedFdxDetail(grant)) continue;
    // The library asks for consent while a requested scope is neither granted nor refused
    // by the grant (op_scopes_missing). What the approver could not grant now is refused,
    // which changes nothing the grant allows and keeps the prompt from coming back.
    const encountered = new Set(grant.getOIDCScopeEncountered().split(' '));
    const unseen = q.plan.withheld.filter((scope) => !encountered.has(scope));
    if (unseen.length > 0) {
      grant.rejectOIDCScope(unseen.join(' '));
      await grant.save();
    }
    return grant;
  }
  return undefined;
}

/**
 * oidc-provider's loadExistingGrant. After our consent route: the grant it created. Otherwise,
 * for a signed-in user with one organization (so it is known) and no prompt=consent:
 * a live authorization that covers the request, so the browser goes straight back to the
 * application. Anything else gets a fresh Grant, hence the consent prompt; a user with
 * several organizations is matched after choosing one (interactions/consent-page.ts).
 */
export function makeLoadExistingGrant(db: Db, environment: Environment): Configuration['loadExistingGrant'] {
  return async (ctx: KoaContextWithOIDC) => {
    const chosen = ctx.oidc.result?.consent?.grantId;
    if (chosen) return ctx.oidc.provider.Grant.find(chosen);
    const accountId = ctx.oidc.session?.accountId;
    const client = ctx.oidc.client;
    if (!accountId || !client || consentForced(ctx.oidc.params?.prompt)) return undefined;
    // An FDX consent request is always a new consent, asked on the consent screen.
    if (ctx.oidc.params?.authorization_details) return undefined;
    const memberships = await userMemberships(db, accountId, unitOf(ctx));
    if (memberships.length !== 1) return undefined;
    const membership = memberships[0]!;
    const plan = planConsent(
      String(ctx.oidc.params?.scope ?? '').split(' '),
      String(client.scope ?? '').split(' '),
      membership.role as Role,
      subjectTypeOf(client),
      membership.kind,
    );
    // A second factor still owed (step-up): the consent route asks for it first.
    if (
      !hasSecondFactor(ctx.oidc.session?.amr) &&
      stepUpReasons({
        granted: plan.granted,
        clientRequiresMfa: clientRequiresMfa(client),
        organization: { name: membership.name, requireMfa: membership.require_mfa },
        acrValues: ctx.oidc.params?.acr_values,
      }).length > 0
    )
      return undefined;
    return findCoveringGrant(db, ctx.oidc.provider, environment, {
      clientId: client.clientId,
      userId: accountId,
      organizationId: membership.id,
      plan,
    });
  };
}
