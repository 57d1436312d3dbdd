import type { Context } from 'koa';
import { formatEin } from '../../accounts/ein.js';
import type { OrganizationKind, Role } from '../../db/schema.js';
import { userMemberships } from '../request-account.js';
import { unitOf } from '../request-scope.js';
import { interactionCsrf, paths, sendInteractionPage, type ClientView, type Interaction, type InteractionDeps } from './interaction.js';

export interface Membership {
  id: string;
  name: string;
  ein: string;
  kind: OrganizationKind;
  role: Role;
  /** The organization asks every member for a second factor (docs/oauth.md, "Second factors and step-up"). */
  requireMfa: boolean;
}

export const ROLE_NAMES: Readonly<Record<Role, string>> = { owner: 'Owner', admin: 'Admin', member: 'Member', read_only: 'Read-only' };

/** The kind as the pages name it: a label ("Fund provider") and a noun in a sentence ("fund provider"). */
export const KIND_LABELS: Readonly<Record<OrganizationKind, { label: string; noun: string }>> = {
  nonprofit: { label: 'Nonprofit', noun: 'nonprofit' },
  fund_provider: { label: 'Fund provider', noun: 'fund provider' },
};

export async function membershipsOf(deps: InteractionDeps, ctx: Context, userId: string): Promise<Membership[]> {
  return (await userMemberships(deps.db, userId, unitOf(ctx))).map((m) => ({ id: m.id, name: m.name, ein: formatEin(m.ein), kind: m.kind, role: m.role, requireMfa: m.require_mfa }));
}

/**
 * What the choice page calls the organizations: their kind when they are all of one kind
 * (a nonprofit's staff keep reading "nonprofit"), "organization" otherwise or when there is none.
 */
function choiceNoun(memberships: readonly Membership[]): string {
  const kinds = new Set(memberships.map((m) => m.kind));
  return kinds.size === 1 ? KIND_LABELS[memberships[0]!.kind].noun : 'organization';
}

/**
 * The organization the application will act for (a nonprofit or a fund provider): the only
 * one, or the one chosen on this page (`?org=`, from the buttons). Choosing changes nothing on
 * the server; approval is the consent form's POST. Answers undefined after rendering the
 * choice (or the "no organization" page, which offers Deny only).
 */
export async function resolveOrganization(deps: InteractionDeps, ctx: Context, interaction: Interaction, memberships: Membership[], client: ClientView, user: { email: string; name: string | null }): Promise<Membership | undefined> {
  // Chosen on this page (?org=), or before a step-up (carried in the step's result).
  const wanted = typeof ctx.query.org === 'string' ? ctx.query.org : (interaction.lastSubmission as { organization?: unknown } | undefined)?.organization;
  const chosen = typeof wanted === 'string' ? memberships.find((m) => m.id === wanted) : undefined;
  if (chosen) return chosen;
  if (memberships.length === 1) return memberships[0];
  const p = paths(interaction);
  const noun = choiceNoun(memberships);
  sendInteractionPage(deps, ctx, interaction, 'choose-organization.njk', {
    client,
    user,
    noun,
    article: noun === 'organization' ? 'an' : 'a',
    organizations: memberships.map((m) => ({ ...m, roleName: ROLE_NAMES[m.role], kindLabel: KIND_LABELS[m.kind].label })),
    action: p.page,
    denyAction: p.deny,
    csrf: interactionCsrf(deps, interaction),
    unknownChoice: typeof ctx.query.org === 'string',
  }, typeof ctx.query.org === 'string' ? 400 : undefined);
  return undefined;
}
