import type { Context, Middleware } from 'koa';
import { HttpProblem, sendErrorPage, type ErrorPage, type PageRenderer } from './problem.js';
import type { HostTable, HostTarget } from './hosts.js';

/**
 * Picks the app for the request's Host (each target's app, by its origin). An authority we do
 * not serve is 421 Misdirected Request (RFC 9110 15.5.20): the connection reached us, but not
 * for that name. A program gets the problem; a browser (Accept: text/html first) a page, laid
 * out by `render`, naming where this server is.
 */
export function hostDispatch(table: HostTable, apps: Readonly<Record<string, Middleware>>, render: PageRenderer<Context>): Middleware {
  return async (ctx, next) => {
    const target = table.lookup(ctx.get('host'));
    if (!target) {
      if (ctx.accepts('json', 'html') === 'html') return sendErrorPage(ctx, misdirectedPage(table, ctx), render);
      throw new HttpProblem(421, 'Misdirected Request', `This server does not serve the host "${ctx.get('host') || '(none)'}".`);
    }
    ctx.state.host = target.key;
    ctx.state.publicOrigin = target.origin;
    await apps[target.origin]!(ctx, next);
  };
}

const SURFACE_NAMES: Record<HostTarget['key'], string> = {
  api: 'production API',
  sandbox_api: 'sandbox API',
  dashboard: 'production dashboard',
  sandbox_dashboard: 'sandbox dashboard',
};

/**
 * The 421 page: what this port serves and at which URL, with links to the same path there (the
 * configured origins and their dev aliases only; the request's own path and query, never its
 * host). A listener whose port no URL names (ALMONER_LISTEN, behind a proxy) lists them all.
 */
function misdirectedPage(table: HostTable, ctx: Context): ErrorPage {
  const host = (ctx.get('host') || '(none)').slice(0, 100);
  const here = table.onPort(ctx.req.socket.localPort);
  const shown = here.length > 0 ? here : table.targets;
  const configured = shown.filter((t) => !t.aliasOf);
  const at = (t: HostTarget) => (t.alias ? `${t.origin} (or ${t.alias}, where passkeys work)` : t.origin);
  const text =
    configured.length === 1
      ? `This is Almoner's ${SURFACE_NAMES[configured[0]!.key]}; open it at ${at(configured[0]!)}.`
      : `This is Almoner: ${configured.map((t) => `its ${SURFACE_NAMES[t.key]} is at ${at(t)}`).join('; ')}.`;
  const path = `${ctx.path}${ctx.search}`.slice(0, 2048);
  return {
    status: 421,
    title: 'Not served at this address',
    text: `This server does not answer to the name “${host}”. ${text}`,
    links: shown.map((t) => ({ href: `${t.origin}${path}`, label: `${t.origin}${path.length > 60 ? `${path.slice(0, 60)}…` : path}` })),
  };
}
