import crypto from 'node:crypto';
import type { KeyedHasher } from '../keys/server-keys.js';
import type { RenditionSize } from '../gift-processing/scan-renditions.js';
import { orgPath } from './paths.js';

/**
 * The short-lived URLs the mail pages give their viewer for scan images (docs/gift-processing.md,
 * "On the dashboard"): an HMAC, under the rotating hashing key's `scan_image_url` purpose, of the
 * organization, the image, the size and the expiry. The image route also checks the viewer
 * belongs to the image's organization: a URL passed to someone else shows them nothing.
 */

/** How long a signed image URL works. */
export const SCAN_IMAGE_URL_TTL_SECONDS = 300;

/** Where the images of an organization's scans are served: <path>/<image id>?size=&expires=&sig=. */
export const scanImagesPath = (ein: string) => orgPath(ein, 'mail/images');

const signed = (organizationId: string, imageId: string, size: RenditionSize, expires: number) =>
  `${organizationId}|${imageId}|${size}|${expires}`;

/** A URL of the image at `size` for members of `organization`, valid SCAN_IMAGE_URL_TTL_SECONDS from `now`. */
export function signedScanImageUrl(
  keys: KeyedHasher,
  organization: { id: string; ein: string },
  imageId: string,
  size: RenditionSize,
  now = Date.now(),
): string {
  const expires = Math.floor(now / 1000) + SCAN_IMAGE_URL_TTL_SECONDS;
  const sig = keys.keyedHash('scan_image_url', signed(organization.id, imageId, size, expires));
  const query = new URLSearchParams({ size, expires: String(expires), sig });
  return `${scanImagesPath(organization.ein)}/${imageId}?${query.toString()}`;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/**
 * Whether `sig` signs this image, size and expiry for the organization, and the expiry is
 * neither past nor further than a URL's life ahead (a constant-time comparison against every
 * live key version).
 */
export function validScanImageSignature(
  keys: KeyedHasher,
  organizationId: string,
  imageId: string,
  size: RenditionSize,
  expiresParam: unknown,
  sig: unknown,
  now = Date.now(),
): boolean {
  if (typeof expiresParam !== 'string' || !/^[0-9]{1,12}$/.test(expiresParam) || typeof sig !== 'string' || sig.length > 200) return false;
  const expires = Number(expiresParam);
  const seconds = Math.floor(now / 1000);
  if (expires < seconds || expires > seconds + SCAN_IMAGE_URL_TTL_SECONDS) return false;
  const expected = keys.keyedHashes('scan_image_url', signed(organizationId, imageId, size, expires));
  // Every version is compared, so the time taken does not tell which one matched.
  return expected.map((candidate) => equal(candidate, sig)).includes(true);
}
