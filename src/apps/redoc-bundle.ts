import fs from 'node:fs';
import path from 'node:path';
import { REDOC_DIR } from '../config/paths.js';

/**
 * The bundle's one reference to another site: the sidebar's "API docs by Redocly" logo, from
 * cdn.redoc.ly. It becomes an empty image (the link and its words stay), so the page asks
 * nothing of any other origin; the browser test fails if the bundle gains another, and the
 * vendoring script (scripts/vendor-redoc.ts) refuses a version that names the CDN elsewhere.
 * The vendored file stays byte for byte as published, so its checksum matches the registry's.
 */
export const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";

/** Redoc's self-contained browser build, vendored in the repository (no CDN, no npm dependency), as the page serves it. */
export function loadRedocBundle(): Buffer {
  return Buffer.from(fs.readFileSync(path.join(REDOC_DIR, 'redoc.standalone.js'), 'utf8').replaceAll(REDOC_CDN_LOGO, EMPTY_IMAGE));
}
