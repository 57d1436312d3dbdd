import type { Context, Middleware } from 'koa';
import type { ErrorPage, PageRenderer } from '../http/problem.js';
import type { InteractionDeps } from '../oidc/interactions/interaction.js';
import { sendDashboardPage } from './page.js';
import { ACCOUNT_PATH } from './paths.js';
import { currentViewer } from './viewer.js';

/**
 * Error pages of the signed-in side (docs/accounts.md, "Pages"): an error met by a signed-in
 * user on a dashboard page (a 403, a 404, a 409…) is shown inside the dashboard (navigation,
 * who is signed in, Sign out, and the organization's header when the page named one the user
 * belongs to), with the status, title, text and request id of the error page src/http/ made of
 * it: the error handler decides what the page says, this only lays it out. Signed-out visitors
 * and the authorization flow's pages keep the plain error page (error.njk).
 */

/**
 * The dashboard host's error page layout: in the dashboard when the request knows its
 * signed-in viewer (error-frame.ts), else `plain`. The organization's tabs are shown only when
 * the viewer may open them: a Member refused an organization's page sees its header alone.
 */
export function dashboardErrorLayout(deps: InteractionDeps, plain: PageRenderer<Context>): PageRenderer<Context> {
  return (ctx, page: ErrorPage) => {
    const frame = ctx.state.dashboardFrame;
    if (!frame) return plain(ctx, page);
    const organization = frame.organization;
    const section = organization
      ? { organization, heading: false, tabs: frame.viewer.actsFor.some((m) => m.id === organization.id) }
      : ('none' as const);
    try {
      sendDashboardPage(
        deps,
        ctx,
        frame.viewer,
        'dashboard/error.njk',
        section,
        { title: page.title, text: page.text, description: page.description },
        page.status,
      );
    } catch (error) {
      // The plain page never depends on the viewer: what went wrong is still said.
      ctx.state.log?.error({ err: error }, 'dashboard error page failed; plain page sent');
      plain(ctx, page);
    }
  };
}

/** The signed-in side's own addresses, where a page nobody serves is still a dashboard page. */
const DASHBOARD_PREFIXES = [`${ACCOUNT_PATH}/`, '/orgs/'];

/**
 * A page of the signed-in side that does not exist (a mistyped tab, an old link), asked for by
 * a signed-in user: the 404 the routers leave is framed like any other error, so the viewer is
 * looked up for it. Anyone else gets the plain page, as before.
 */
export function framedNotFound(deps: InteractionDeps): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body != null || ctx.state.dashboardFrame || !['GET', 'HEAD'].includes(ctx.method)) return;
    if (DASHBOARD_PREFIXES.some((prefix) => ctx.path.startsWith(prefix))) await currentViewer(deps, ctx);
  };
}
