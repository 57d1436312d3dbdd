import type { Context } from 'koa';
import { KIND_LABELS, ROLE_NAMES, toMemberships, type Membership } from '../../identity/memberships.js';
import { userMemberships } from '../request-account.js';
import { unitOf } from '../request-scope.js';
import { interactionCsrf, paths, sendInteractionPage, type ClientView, type Interaction, type InteractionDeps } from './interaction.js';

export async function membershipsOf(deps: InteractionDeps, ctx: Context, userId: string): Promise<Membership[]> {
  return toMemberships(await userMemberships(deps.db, userId, unitOf(ctx)));
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
export async function resolveOrganization(
  deps: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  memberships: Membership[],
  client: ClientView,
  user: { email: string; name: string | null },
): Promise<Membership | undefined> {
  // Chosen on this page (?org=), or before a step-up (carried in the step's result).
  const wanted =
    typeof ctx.query.org === 'string'
      ? ctx.query.org
      : (interaction.lastSubmission as { organization?: unknown } | undefined)?.organization;
  const chosen = typeof wanted === 'string' ? memberships.find((m) => m.id === wanted) : undefined;
  if (chosen) return chosen;
  if (memberships.length === 1) return memberships[0];
  const p = paths(interaction);
  const noun = choiceNoun(memberships);
  sendInteractionPage(
    deps,
    ctx,
    interaction,
    'choose-organization.njk',
    {
      client,
      user,
      noun,
      article: noun === 'organization' ? 'an' : 'a',
      organizations: memberships.map((m) => ({ ...m, roleName: ROLE_NAMES[m.role], kindLabel: KIND_LABELS[m.kind].label })),
      action: p.page,
      denyAction: p.deny,
      csrf: interactionCsrf(deps, interaction),
      unknownChoice: typeof ctx.query.org === 'string',
    },
    typeof ctx.query.org === 'string' ? 400 : undefined,
  );
  return undefined;
}
