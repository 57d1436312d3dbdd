import { z } from 'zod';
import { defineRoute } from '../routing/route-spec.js';
import { organizationOf } from './accounts-service.js';
import { statementActivity, statementOf } from './activity-service.js';
import { ActivityQuery, listAccountActivity } from './activity-list.js';
import { AccountParams, FDX_ROUTE } from './account-routes.js';
import { requireAccount } from './access.js';
import { isUuid } from './paging.js';
import { lookbackStart } from './consent-scope.js';
import { isoDate } from './dates.js';
import { customerNotFound, statementNotFound } from './problems.js';
import { ListStatementsResponse, toStatement } from './shapes.js';
import { loadStatementContent } from './statement-content.js';
import { chooseFormat, STATEMENT_FORMATS } from './statement-formats.js';

export const statementRoutes = [
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'listAccountStatements',
    method: 'get',
    path: '/fdx/v6/accounts/:id/statements',
    summary: "An account's monthly statements by statement date, newest first",
    tag: 'FDX Statements',
    params: AccountParams,
    query: ActivityQuery,
    response: ListStatementsResponse,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, query }) {
      const { items, page } = await listAccountActivity(db, caller, params.id, query, statementActivity);
      return { page, statements: items.map(toStatement) };
    },
  }),
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'getAccountStatement',
    method: 'get',
    path: '/fdx/v6/accounts/:id/statements/:statementId',
    summary: 'A statement file, generated from the stored transactions: PDF (default), CSV or BAI2 by Accept',
    tag: 'FDX Statements',
    params: AccountParams.extend({ statementId: z.string().max(100).describe('The statementId (a UUID)') }),
    media: STATEMENT_FORMATS.map((f) => f.mediaType),
    response: z.string(),
    errors: [401, 403, 404, 406],
    async handler({ ctx, db, caller, params }) {
      const account = await requireAccount(db, caller, params.id);
      // Another account's statement, even the caller's own, is not this account's: 1104; so is
      // one dated before the consent's lookback (docs/api.md, "FDX bank-data API", Consents).
      const statement = isUuid(params.statementId) ? await statementOf(db, account.id, params.statementId) : undefined;
      const oldest = lookbackStart(caller, new Date());
      if (!statement || (oldest && statement.period_end < isoDate(oldest))) throw statementNotFound();
      const format = chooseFormat(ctx);
      const organization = await organizationOf(db, caller.organizationId);
      if (!organization) throw customerNotFound();
      // Totals are read before the first byte, so a failure here is still a proper problem.
      const content = await loadStatementContent(db, organization, account, statement);
      ctx.type = format.mediaType;
      ctx.set(
        'Content-Disposition',
        `attachment; filename="statement-${statement.period_start.slice(0, 7)}-${account.account_number.slice(-4)}.${format.extension}"`,
      );
      ctx.set('Cache-Control', 'private, no-store');
      ctx.vary('Accept');
      return format.render(content);
    },
  }),
];
