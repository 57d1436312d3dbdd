import type { Context } from 'koa';
import { invalid, notFound } from '../errors/domain-error.js';
import {
  isMailItemStatus,
  mailItemDetail,
  mailItemsPage,
  type MailFilters,
  type MailItemSummary,
} from '../gift-processing/dashboard-service.js';
import { MAIL_ITEM_STATUSES } from '../db/schema-gift.js';
import { shownDate } from './dates.js';
import type { DashboardDeps } from './deps.js';
import { giftScope, propertyAction } from './deposits-page.js';
import { signedScanImageUrl } from './gift-image-urls.js';
import {
  giftTone,
  IMAGE_LABELS,
  lockboxLabel,
  mailPath,
  MAIL_STATUS_LABELS,
  setNotice,
  shownDeposit,
  shownDonations,
} from './gift-shown.js';
import type { OrgRequest } from './guards.js';
import { sendDashboardPage } from './page.js';

/**
 * A nonprofit's Mail (docs/gift-processing.md, "On the dashboard"): the envelopes its lockboxes
 * received, newest first, filtered by lockbox and status (a GET form, so a filtered list can be
 * bookmarked); a mail item's page with its scans' images, donations, deposit and, when it needs
 * review or was rejected, why. Images are served through short-lived signed URLs
 * (gift-image-urls.ts).
 */

const PAGE_SIZE = 25;

type Organization = OrgRequest['organization'];

function shownItem(deps: DashboardDeps, organization: Organization, item: MailItemSummary) {
  return {
    href: `${mailPath(organization.ein)}/${item.id}`,
    envelopeId: item.envelopeId,
    received: shownDate(item.receivedAt),
    lockbox: lockboxLabel(item.lockbox),
    status: MAIL_STATUS_LABELS[item.status] ?? item.status,
    tone: giftTone(item.status),
    donations: item.donations,
    thumbnail: item.firstImageId ? signedScanImageUrl(deps.serverKeys, organization, item.firstImageId, 'thumb') : undefined,
  };
}

/** One query parameter: a single non-empty string, or undefined. */
function single(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(`${name}: give it once`);
  return value;
}

/** GET /orgs/:ein/mail?lockbox=&status=&before= */
export async function showMail(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const scope = giftScope(deps, request);
  const status = single(ctx, 'status');
  if (status !== undefined && !isMailItemStatus(status)) throw invalid(`status: one of ${MAIL_ITEM_STATUSES.join(', ')}`);
  const filters: MailFilters = { lockboxId: single(ctx, 'lockbox'), status };
  const before = single(ctx, 'before');
  const page = await mailItemsPage(deps.db, scope, filters, before, PAGE_SIZE);
  const { organization } = request;
  const here = mailPath(organization.ein);
  const kept = new URLSearchParams();
  if (filters.lockboxId) kept.set('lockbox', filters.lockboxId);
  if (filters.status) kept.set('status', filters.status);
  const withQuery = (extra: Record<string, string>) => {
    const query = new URLSearchParams(kept);
    for (const [k, v] of Object.entries(extra)) query.set(k, v);
    const text = query.toString();
    return text ? `${here}?${text}` : here;
  };
  sendDashboardPage(
    deps,
    ctx,
    request.viewer,
    'dashboard/mail.njk',
    { organization, tab: 'mail' },
    {
      environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
      action: here,
      filters: { lockbox: filters.lockboxId ?? '', status: filters.status ?? '' },
      filtered: Boolean(filters.lockboxId || filters.status),
      lockboxes: page.lockboxes.map((l) => ({ value: l.id, label: lockboxLabel(l) })),
      statuses: MAIL_ITEM_STATUSES.map((s) => ({ value: s, label: MAIL_STATUS_LABELS[s]! })),
      items: page.rows.map((item) => shownItem(deps, organization, item)),
      newer: before ? withQuery({}) : undefined,
      older: page.older ? withQuery({ before: page.older }) : undefined,
    },
  );
}

/** GET /orgs/:ein/mail/:item */
export async function showMailItem(
  deps: DashboardDeps,
  ctx: Context,
  request: OrgRequest,
  extra: { notice?: string; error?: string; status?: number } = {},
): Promise<void> {
  const scope = giftScope(deps, request);
  const id = String(ctx.params.item ?? '');
  const detail = await mailItemDetail(deps.db, scope, id);
  if (!detail) throw notFound('There is no such mail item among this organization’s.');
  const { organization } = request;
  const item = shownItem(deps, organization, detail.item);
  const reason =
    detail.item.status === 'needs_review' || detail.item.status === 'rejected'
      ? [detail.item.reviewLine ? `Line ${detail.item.reviewLine} of the batch's index` : undefined, detail.item.reviewReason ?? undefined]
          .filter(Boolean)
          .join(': ') || 'No reason was recorded.'
      : undefined;
  sendDashboardPage(
    deps,
    ctx,
    request.viewer,
    'dashboard/mail-item.njk',
    { organization, tab: 'mail' },
    {
      back: mailPath(organization.ein),
      item: { ...item, id: detail.item.id, reason },
      scans: detail.scans.map((scan) => ({
        fileId: scan.fileId,
        scanned: shownDate(scan.scannedAt),
        images: scan.images.map((image) => ({
          id: image.id,
          label: IMAGE_LABELS[image.label] ?? image.label,
          full: signedScanImageUrl(deps.serverKeys, organization, image.id, 'full'),
          thumb: signedScanImageUrl(deps.serverKeys, organization, image.id, 'thumb'),
          width: image.width,
          height: image.height,
        })),
      })),
      donations: shownDonations(detail.donations, propertyAction(request, `${item.href}/properties`)),
      deposit: detail.deposit ? shownDeposit(organization.ein, detail.deposit) : undefined,
      notice:
        extra.notice ??
        setNotice(
          ctx.query.set,
          detail.donations.flatMap((d) => d.properties),
        ),
      error: extra.error,
    },
    extra.status,
  );
}
