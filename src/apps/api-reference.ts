import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { VIEWS_DIR } from '../config/paths.js';
import type { Environment } from '../db/schema.js';
import { GATEWAY_ROUTES } from '../gateway/index.js';
import { buildOpenApiDocument } from '../gateway/openapi.js';
import { API_VERSIONS, DEFAULT_API_VERSION, type ApiVersion } from '../gateway/routing/versions.js';
import { notFound } from '../errors/domain-error.js';
import { API_REFERENCE_POLICY } from '../http/security-headers.js';
import { loadRedocBundle } from './redoc-bundle.js';

const INIT_SCRIPT = path.join(VIEWS_DIR, 'static', 'api-reference.js');

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function versionOf(query: unknown): ApiVersion {
  const requested = typeof query === 'string' && query !== '' ? query : DEFAULT_API_VERSION;
  if (!(API_VERSIONS as readonly string[]).includes(requested))
    throw notFound(`There is no API version ${requested.slice(0, 40)}; versions: ${API_VERSIONS.join(', ')}.`);
  return requested as ApiVersion;
}

function page(version: ApiVersion, environment: Environment, apiOrigin: string): string {
  const spec = `/docs/api/openapi.json?version=${version}`;
  const others = API_VERSIONS.map((v) => (v === version ? `<strong>${v}</strong>` : `<a href="/docs/api?version=${v}">${v}</a>`)).join(
    ' · ',
  );
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
  <title>Almoner API reference ${version}${environment === 'sandbox' ? ' · Sandbox' : ''}</title>
</head>
<body style="margin:0">
  <nav aria-label="API versions" style="font:14px/1.5 system-ui,sans-serif;padding:8px 16px;border-bottom:1px solid #ddd">
    Almoner API${environment === 'sandbox' ? ' (Sandbox)' : ''} at <code>${escape(apiOrigin)}</code> · version ${others} · <a href="${spec}">OpenAPI document</a>
  </nav>
  <div id="api-reference" data-spec="${spec}">
    <noscript><p style="padding:16px">The reference needs JavaScript; the <a href="${spec}">OpenAPI document</a> says the same.</p></noscript>
  </div>
  <script src="/docs/api/redoc.standalone.js"></script>
  <script src="/docs/api/api-reference.js"></script>
</body>
</html>
`;
}

/**
 * The API reference on a dashboard host (/docs/api): Redoc rendering the same OpenAPI
 * document the environment's API host serves at /openapi.json, one version at a time
 * (?version=, the newest by default). Everything is served from this origin.
 */
export function buildApiReferenceRouter(environment: Environment, apiOrigin: string): Router {
  const router = new Router();
  const documents = new Map<ApiVersion, unknown>();
  let bundle: Buffer | undefined;
  router.get('/docs/api', (ctx) => {
    const version = versionOf(ctx.query.version);
    ctx.set('Content-Security-Policy', API_REFERENCE_POLICY);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(version, environment, apiOrigin);
  });
  router.get('/docs/api/openapi.json', (ctx) => {
    const version = versionOf(ctx.query.version);
    if (!documents.has(version)) documents.set(version, buildOpenApiDocument(GATEWAY_ROUTES, version, apiOrigin));
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = documents.get(version);
  });
  router.get('/docs/api/redoc.standalone.js', (ctx) => {
    bundle ??= loadRedocBundle();
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = bundle;
  });
  router.get('/docs/api/api-reference.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = fs.readFileSync(INIT_SCRIPT);
  });
  return router;
}
