import type Router from '@koa/router';
import type { Role } from '../db/schema.js';
import { showDeposit, showDeposits } from './deposits-page.js';
import type { DashboardDeps } from './deps.js';
import { submitPropertyValue } from './gift-property-form.js';
import { orgRoute } from './guards.js';
import { serveScanImage } from './mail-images-page.js';
import { showMail, showMailItem } from './mail-page.js';

/**
 * A nonprofit's gift-processing pages (docs/gift-processing.md, "On the dashboard"), open to
 * every member: Deposits and Mail, each a list and a page per row, and the scan images the
 * mail pages show.
 */

const EVERY_ROLE: readonly Role[] = ['owner', 'admin', 'member', 'read_only'];

/** The pages' paths, under /orgs/:ein. */
export const GIFT_PAGE_PATHS = {
  deposits: '/orgs/:ein/deposits',
  deposit: '/orgs/:ein/deposits/:deposit',
  mail: '/orgs/:ein/mail',
  mailItem: '/orgs/:ein/mail/:item',
  scanImage: '/orgs/:ein/mail/images/:image',
  depositProperties: '/orgs/:ein/deposits/:deposit/properties',
  mailItemProperties: '/orgs/:ein/mail/:item/properties',
} as const;

/** Who may set property values: not Read-only users. */
const EDITORS: readonly Role[] = ['owner', 'admin', 'member'];

export function addGiftRoutes(router: Router, deps: DashboardDeps): void {
  const read = (page: 'deposits' | 'mail') => ({ page, roles: EVERY_ROLE });
  router.get(
    GIFT_PAGE_PATHS.deposits,
    orgRoute(deps, read('deposits'), (ctx, request) => showDeposits(deps, ctx, request)),
  );
  router.get(
    GIFT_PAGE_PATHS.deposit,
    orgRoute(deps, read('deposits'), (ctx, request) => showDeposit(deps, ctx, request)),
  );
  router.get(
    GIFT_PAGE_PATHS.mail,
    orgRoute(deps, read('mail'), (ctx, request) => showMail(deps, ctx, request)),
  );
  router.get(
    GIFT_PAGE_PATHS.scanImage,
    orgRoute(deps, read('mail'), (ctx, request) => serveScanImage(deps, ctx, request)),
  );
  router.get(
    GIFT_PAGE_PATHS.mailItem,
    orgRoute(deps, read('mail'), (ctx, request) => showMailItem(deps, ctx, request)),
  );
  router.post(
    GIFT_PAGE_PATHS.depositProperties,
    orgRoute(deps, { page: 'deposits', roles: EDITORS }, (ctx, request) => submitPropertyValue(deps, ctx, request, 'deposit')),
  );
  router.post(
    GIFT_PAGE_PATHS.mailItemProperties,
    orgRoute(deps, { page: 'mail', roles: EDITORS }, (ctx, request) => submitPropertyValue(deps, ctx, request, 'mail')),
  );
}
