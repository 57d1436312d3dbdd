import type { Environment } from '../db/schema.js';
import type { ErrorPage, PageRenderer } from '../http/problem.js';
import type { LayoutModel, ViewModels, ViewName } from './models.js';
import { renderView } from './render.js';

/** The part of a Koa context a page needs (the provider's renderError gets its own context). */
interface PageTarget {
  status: number;
  type: string;
  body: unknown;
  set(field: string, value: string): void;
}

export interface PageOptions {
  status?: number;
  /**
   * Origins a form on the page may end up at. Chromium applies form-action to the redirects
   * that follow a submission too, so the consent and login pages list the application's
   * redirect URI origin, where the last redirect of the flow goes.
   */
  formTargets?: readonly string[];
}

function origins(targets: readonly string[]): string[] {
  const list: string[] = [];
  for (const target of targets) {
    try {
      const { origin } = new URL(target);
      if (origin !== 'null' && !list.includes(origin)) list.push(origin);
    } catch {
      /* not a URL: nothing to allow */
    }
  }
  return list;
}

/**
 * The hosted pages' policy: our stylesheet only, no script at all (not even inline), images
 * from us, https (application logos) or data:, forms to ourselves (plus the redirect URI
 * origin), never framed. X-Frame-Options: DENY comes with it for browsers without CSP 2.
 * Two kinds of page run script files of ours, never inline script: a page that offers
 * passkeys (docs/security.md, "Passkeys") runs two and lets them fetch from this origin; a
 * sign-out page that needs no decision (docs/oauth.md, "Signing out from an application")
 * runs one that submits its form, and fetches nothing.
 */
export function pagePolicy(formTargets: readonly string[] = [], scripts: 'none' | 'passkeys' | 'auto-submit' = 'none'): string {
  const formAction = ["'self'", ...origins(formTargets)].join(' ');
  const scriptSources =
    scripts === 'passkeys' ? " script-src 'self'; connect-src 'self';" : scripts === 'auto-submit' ? " script-src 'self';" : '';
  return `default-src 'none';${scriptSources} style-src 'self'; img-src 'self' https: data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * Renders a hosted page with its security headers and the layout's common values. A page
 * whose data has a `passkeyForm` gets the passkey scripts, one with `autoSubmit` the script
 * that submits its form, in the layout and in the policy.
 */
export function sendPage<V extends ViewName>(
  ctx: PageTarget,
  environment: Environment,
  view: V,
  data: Omit<ViewModels[V], keyof LayoutModel> & Partial<LayoutModel>,
  options: PageOptions = {},
): void {
  const layout: Partial<LayoutModel> = data;
  const scripts = layout.passkeyForm ? 'passkeys' : layout.autoSubmit ? 'auto-submit' : 'none';
  ctx.set('Content-Security-Policy', pagePolicy(options.formTargets, scripts));
  ctx.set('X-Frame-Options', 'DENY');
  if (options.status) ctx.status = options.status;
  ctx.type = 'html';
  ctx.body = renderView(view, { sandbox: environment === 'sandbox', environment, ...data } as ViewModels[V]);
}

/**
 * Lays out the error pages src/http/ renders (error.njk), for the hosted pages and the provider's
 * renderError alike, with the request id to quote.
 */
export function errorPageLayout(environment: Environment): PageRenderer<PageTarget & { res: { getHeader(name: string): unknown } }> {
  return (ctx, page: ErrorPage) => {
    const requestId = String(ctx.res.getHeader('x-request-id') ?? '');
    sendPage(
      ctx,
      environment,
      'error.njk',
      { title: page.title, text: page.text, description: page.description, links: page.links, requestId },
      { status: page.status },
    );
  };
}
