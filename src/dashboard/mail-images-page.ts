import type { Context } from 'koa';
import { forbidden, notFound } from '../errors/domain-error.js';
import { scanImage } from '../gift-processing/dashboard-service.js';
import { isRenditionSize, scanRendition, ScanUnreadable } from '../gift-processing/scan-renditions.js';
import type { DashboardDeps } from './deps.js';
import { giftScope } from './deposits-page.js';
import { validScanImageSignature } from './gift-image-urls.js';
import type { OrgRequest } from './guards.js';

/**
 * A scan image, as the mail pages link it (docs/gift-processing.md, "On the dashboard"): only
 * to a signed-in member of the image's organization (orgRoute), and only through a URL the
 * page signed for that organization, this image and size, still within its five minutes.
 * Unknown (or another organization's): 404; a URL expired or altered: 403. A TIFF that cannot
 * be decoded answers 422 with a placeholder, never an error of the server.
 */

const PLACEHOLDER = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="110" viewBox="0 0 240 110">' +
    '<rect width="240" height="110" fill="#f1f1f4" stroke="#b8b8c4"/>' +
    '<text x="120" y="60" font-family="sans-serif" font-size="14" text-anchor="middle" fill="#55556a">Image unavailable</text></svg>',
);

/** GET /orgs/:ein/mail/images/:image?size=&expires=&sig= */
export async function serveScanImage(deps: DashboardDeps, ctx: Context, request: OrgRequest): Promise<void> {
  const scope = giftScope(deps, request);
  const image = await scanImage(deps.db, scope, String(ctx.params.image ?? ''));
  if (!image) throw notFound('There is no such image among this organization’s scans.');
  const size = ctx.query.size;
  if (
    !isRenditionSize(size) ||
    !validScanImageSignature(deps.serverKeys, scope.organizationId, image.id, size, ctx.query.expires, ctx.query.sig)
  ) {
    throw forbidden('This image link has expired or is not valid. Reload the page to see the image.', {
      title: 'The image link has expired',
    });
  }
  // The URL expires within five minutes: a browser may keep the image that long, never longer.
  const maxAge = Math.max(0, Math.min(300, Number(ctx.query.expires) - Math.floor(Date.now() / 1000)));
  ctx.set('Cache-Control', `private, max-age=${maxAge}`);
  try {
    const rendition = await scanRendition(deps.storage, image, size);
    ctx.type = 'image/webp';
    ctx.body = rendition.body;
  } catch (error) {
    if (!(error instanceof ScanUnreadable)) throw error;
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 422;
    ctx.type = 'image/svg+xml';
    ctx.body = PLACEHOLDER;
  }
}
