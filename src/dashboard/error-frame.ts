import type { Context } from 'koa';
import type { Membership } from '../identity/memberships.js';
import type { Viewer } from './viewer.js';

/**
 * What a request of the signed-in side has learnt of who is asking, kept on the request for
 * its error page (error-page.ts): the signed-in viewer once it is known, and the organization
 * the URL names once the viewer is found to belong to it. Only the dashboard's own pages read a
 * viewer, so the authorization flow's requests never carry one.
 */
interface ErrorFrame {
  viewer: Viewer;
  organization?: Membership;
}

declare module 'koa' {
  interface DefaultState {
    /** Set once the request knows its signed-in viewer (viewer.ts), and the organization it names (guards.ts). */
    dashboardFrame?: ErrorFrame;
  }
}

/** The request's signed-in viewer, for an error page later in the request. */
export function rememberViewer(ctx: Context, viewer: Viewer): void {
  ctx.state.dashboardFrame = { viewer };
}

/** The organization the request names, of which the viewer is a member. */
export function rememberOrganization(ctx: Context, organization: Membership): void {
  if (ctx.state.dashboardFrame) ctx.state.dashboardFrame.organization = organization;
}
