import type { Context } from 'koa';
import type { DashboardPageModels, DashboardPageName } from '../views/models.js';
import { sendPage } from '../views/page.js';
import { KIND_LABELS, manages, ROLE_NAMES, type Membership } from '../identity/memberships.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import { sessionCsrf } from './guards.js';
import { ACCOUNT_PATH, CONNECTIONS_PATH, orgPath, SECURITY_PATH, SIGN_OUT_PATH } from './paths.js';
import type { Viewer } from './viewer.js';

/**
 * Where a page sits in the dashboard's navigation: 'none' for a page of no tab (an error page).
 * An organization's page without `tab` has no current tab; `tabs: false` leaves them out (a
 * viewer who may not open them); `heading: false` shows the organization's name as the context
 * of the page's own heading (an error page's title is its heading).
 */
export type Section =
  'account' | 'security' | 'connections' | 'none' | { organization: Membership; tab?: OrgTab; tabs?: boolean; heading?: boolean };

/**
 * The tabs of an organization's pages, in order. `kinds`: shown only for these kinds of
 * organization (webhooks carry the fund providers' events); `everyone`: open to every member,
 * where the others are for Owners and Admins.
 */
export const ORG_TABS = [
  { page: 'grantmaking', label: 'Grantmaking', kinds: ['grantmaker'], everyone: true },
  { page: 'incoming', label: 'Incoming disbursements', kinds: ['nonprofit'], everyone: true },
  { page: 'deposits', label: 'Deposits', kinds: ['nonprofit'], everyone: true },
  { page: 'mail', label: 'Mail', kinds: ['nonprofit'], everyone: true },
  { page: 'members', label: 'Members' },
  { page: 'api-keys', label: 'API keys' },
  { page: 'webhooks', label: 'Webhooks', kinds: ['fund_provider', 'nonprofit', 'platform'] },
  { page: 'connections', label: 'Connected applications' },
  { page: 'audit', label: 'Audit log' },
  { page: 'settings', label: 'Settings' },
] as const satisfies readonly { page: string; label: string; kinds?: readonly string[]; everyone?: boolean }[];
export type OrgTab = (typeof ORG_TABS)[number]['page'];

function navigation(viewer: Viewer, section: Section) {
  const organization = typeof section === 'object' ? section.organization : undefined;
  return {
    section: typeof section === 'object' ? 'organization' : section,
    account: ACCOUNT_PATH,
    security: SECURITY_PATH,
    connections: CONNECTIONS_PATH,
    organizations: viewer.manages.map((m) => ({ name: m.name, href: orgPath(m.ein, 'members'), current: m.id === organization?.id })),
  };
}

function organizationHeader(section: Section) {
  if (typeof section !== 'object') return undefined;
  const { organization: m, tab, tabs = true, heading = true } = section;
  return {
    id: m.id,
    name: m.name,
    ein: m.ein,
    kind: KIND_LABELS[m.kind],
    roleName: ROLE_NAMES[m.role],
    heading,
    tabs: !tabs
      ? []
      : ORG_TABS.filter(
          (t) => (!('kinds' in t) || (t.kinds as readonly string[]).includes(m.kind)) && (('everyone' in t && t.everyone) || manages(m)),
        ).map((t) => ({
          label: t.label,
          href: orgPath(m.ein, t.page),
          current: t.page === tab,
        })),
  };
}

/**
 * Renders a page of the signed-in side: the dashboard layout (navigation, who is signed in,
 * Sign out), the session-bound CSRF token every form carries, and for an organization's pages
 * its header and tabs.
 */
export function sendDashboardPage<V extends DashboardPageName>(
  deps: InteractionDeps,
  ctx: Context,
  viewer: Viewer,
  view: V,
  section: Section,
  data: DashboardPageModels[V],
  status?: number,
): void {
  sendPage<DashboardPageName>(
    ctx,
    deps.environment,
    view,
    {
      requestId: ctx.state.requestId,
      environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
      viewer: { email: viewer.user.email, name: viewer.user.display_name },
      nav: navigation(viewer, section),
      org: organizationHeader(section),
      csrf: sessionCsrf(deps, viewer),
      signOutAction: SIGN_OUT_PATH,
      ...data,
    },
    { status },
  );
}
