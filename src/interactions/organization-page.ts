import type { Context } from 'koa';
import { formatEin } from '../accounts/ein.js';
import { listNonprofitMemberships } from '../accounts/repository.js';
import type { Role } from '../db/schema.js';
import { interactionCsrf, paths, sendInteractionPage, type ClientView, type Interaction, type InteractionDeps } from './interaction.js';

export interface Membership {
  id: string;
  name: string;
  ein: string;
  role: Role;
}

export const ROLE_NAMES: Readonly<Record<Role, string>> = { owner: 'Owner', admin: 'Admin', member: 'Member', read_only: 'Read-only' };

export async function membershipsOf(deps: InteractionDeps, userId: string): Promise<Membership[]> {
  return (await listNonprofitMemberships(deps.db, userId)).map((m) => ({ id: m.id, name: m.name, ein: formatEin(m.ein), role: m.role }));
}

/**
 * The nonprofit the application will act for: the only one, or the one chosen on this page
 * (`?org=`, from the buttons). Choosing changes nothing on the server; approval is the
 * consent form's POST. Answers undefined after rendering the choice (or the "no nonprofit"
 * page, which offers Deny only).
 */
export async function resolveOrganization(deps: InteractionDeps, ctx: Context, interaction: Interaction, memberships: Membership[], client: ClientView, user: { email: string; name: string | null }): Promise<Membership | undefined> {
  const chosen = typeof ctx.query.org === 'string' ? memberships.find((m) => m.id === ctx.query.org) : undefined;
  if (chosen) return chosen;
  if (memberships.length === 1) return memberships[0];
  const p = paths(interaction);
  sendInteractionPage(deps, ctx, interaction, 'choose-organization.njk', {
    client,
    user,
    organizations: memberships.map((m) => ({ ...m, roleName: ROLE_NAMES[m.role] })),
    action: p.page,
    denyAction: p.deny,
    csrf: interactionCsrf(deps, interaction),
    unknownChoice: typeof ctx.query.org === 'string',
  }, typeof ctx.query.org === 'string' ? 400 : undefined);
  return undefined;
}
