import type { Context } from 'koa';
import { approveDisbursement, cancelDisbursement } from '../grantmaking/disbursements-service.js';
import { disbursementsAccountBalance, grantmakerDisbursementsPage } from '../grantmaking/dashboard-service.js';
import { organizationSecuritySettings } from '../accounts/organization-settings.js';
import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import { manages, type Membership } from '../identity/memberships.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import type { OrgRequest } from './guards.js';
import { DISBURSEMENT_STATUS_LABELS, dollars, statusTone } from './money.js';
import { sendDashboardPage } from './page.js';
import { orgPath } from './paths.js';
import type { Viewer } from './viewer.js';

/**
 * A grantmaker's Grantmaking page (docs/accounts.md, "Grantmaking and incoming disbursements"):
 * the disbursements account's balances and the disbursements of the dashboard's environment,
 * for every member; Owners and Admins approve and cancel pending ones, as `user:<id>`, through
 * the services the API calls (the approver-is-not-creator setting included).
 */

const PAGE_SIZE = 25;

/** The organization of the page must be a grantmaker (only grantmakers make disbursements). */
export function grantmaker(organization: Membership): Membership {
  if (organization.kind !== 'grantmaker') throw notFound('Disbursements are made by grantmakers; this organization is not one.');
  return organization;
}

const actorOf = (viewer: Viewer) => `user:${viewer.user.id}`;

function beforeOf(ctx: Context): string | undefined {
  const before = ctx.query.before;
  if (before === undefined) return undefined;
  if (typeof before !== 'string' || before === '') throw invalid('before: not a disbursement of this list');
  return before;
}

async function render(
  deps: DashboardDeps,
  ctx: Context,
  viewer: Viewer,
  organization: Membership,
  state: { notice?: string; error?: string; status?: number } = {},
): Promise<void> {
  const scope = { organizationId: organization.id, environment: deps.environment };
  const before = state.error ? undefined : beforeOf(ctx);
  const [account, page, settings] = await Promise.all([
    disbursementsAccountBalance(deps.db, scope),
    grantmakerDisbursementsPage(deps.db, scope, before, PAGE_SIZE),
    organizationSecuritySettings(deps.db, organization.id),
  ]);
  const secondApprover = settings?.requireSecondApprover ?? false;
  const mayDecide = manages(organization);
  const here = orgPath(organization.ein, 'grantmaking');
  sendDashboardPage(
    deps,
    ctx,
    viewer,
    'dashboard/grantmaking.njk',
    { organization, tab: 'grantmaking' },
    {
      environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
      account: account && { current: dollars(account.currentBalance), available: dollars(account.availableBalance) },
      secondApprover,
      mayDecide,
      disbursements: page.rows.map((d) => {
        const pending = d.status === 'pending_approval';
        const ownPending = pending && secondApprover && d.createdBy === actorOf(viewer);
        return {
          id: d.id,
          recipientName: d.recipientName,
          amount: dollars(d.amount),
          status: DISBURSEMENT_STATUS_LABELS[d.status] ?? d.status,
          tone: statusTone(d.status),
          created: shownDate(d.createdAt),
          mayApprove: mayDecide && pending && !ownPending,
          ownPending: mayDecide && ownPending,
          mayCancel: mayDecide && (pending || d.status === 'awaiting_balance'),
        };
      }),
      actions: { approve: `${here}/approve`, cancel: `${here}/cancel` },
      newer: before ? here : undefined,
      older: page.older ? `${here}?before=${encodeURIComponent(page.older)}` : undefined,
      notice: state.notice,
      error: state.error,
    },
    state.status,
  );
}

/** GET /orgs/:ein/grantmaking */
export async function showGrantmaking(deps: DashboardDeps, ctx: Context, { viewer, organization }: OrgRequest): Promise<void> {
  await render(deps, ctx, viewer, grantmaker(organization), {
    notice:
      ctx.query.done === 'approved'
        ? 'The disbursement is approved.'
        : ctx.query.done === 'canceled'
          ? 'The disbursement is canceled.'
          : undefined,
  });
}

/**
 * POST /orgs/:ein/grantmaking/approve and …/cancel (field `disbursement`): the decision, then
 * back to the list; a refusal (another person must approve, a status that no longer allows it)
 * is shown on the list with its status.
 */
export async function submitDecision(
  deps: DashboardDeps,
  ctx: Context,
  { viewer, organization, form }: OrgRequest,
  decision: 'approve' | 'cancel',
): Promise<void> {
  grantmaker(organization);
  const id = form.disbursement ?? '';
  if (!/^disbursement_[0-9a-z]{26}$/.test(id)) throw invalid('disbursement: not a disbursement id');
  const scope = { organizationId: organization.id, environment: deps.environment };
  try {
    if (decision === 'approve') await approveDisbursement(deps.db, scope, actorOf(viewer), id);
    else await cancelDisbursement(deps.db, scope, id);
  } catch (error) {
    if (error instanceof DomainError && ['forbidden', 'invalid'].includes(error.code))
      return render(deps, ctx, viewer, organization, { error: error.sentence, status: error.code === 'forbidden' ? 403 : 400 });
    throw error;
  }
  ctx.status = 303;
  ctx.redirect(`${orgPath(organization.ein, 'grantmaking')}?done=${decision === 'approve' ? 'approved' : 'canceled'}`);
}
