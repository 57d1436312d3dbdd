import type { KoaContextWithOIDC, ErrorOut } from 'oidc-provider';
import type { Environment } from '../db/schema.js';
import { sendPage } from '../views/page.js';

const FRIENDLY: Record<string, { title: string; text: string }> = {
  invalid_client: { title: 'Unknown application', text: 'The application that sent you here is not registered with us. Go back to it and try again, or contact its developer.' },
  invalid_redirect_uri: { title: 'Unexpected return address', text: 'The application asked us to send you back to an address it has not registered, so we stopped here to keep your account safe.' },
  invalid_request: { title: 'Incomplete request', text: 'The application sent an incomplete or malformed sign-in request.' },
  session_not_found: { title: 'This sign-in has expired', text: 'Your sign-in session has expired or was opened in another browser. Go back to the application and start again.' },
};

/** Authorization errors that cannot go back to the client: a page, never a redirect. */
export function errorPageFor(environment: Environment) {
  return async function renderErrorPage(ctx: KoaContextWithOIDC, out: ErrorOut, error: Error): Promise<void> {
    const requestId = String(ctx.res.getHeader('x-request-id') ?? '');
    const code = out.error;
    const friendly = FRIENDLY[code] ?? { title: 'Something went wrong', text: 'We could not complete this request.' };
    sendPage(ctx, environment, 'error.njk', { title: friendly.title, text: friendly.text, error: code, description: out.error_description, requestId, status: (error as { statusCode?: number }).statusCode ?? ctx.status });
  };
}
