import { z } from 'zod';
import { MAIL_ITEM_STATUSES, type MailItemStatus } from '../../db/schema-gift.js';
import { mailItemOf, mailItemsPage } from '../../gift-processing/mail-items-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GIFT_READ } from './gift-callers.js';
import { MailItem, toMailItem } from './gift-shapes.js';

const dateTime = z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time' });

/** status.in: a comma list of MailItemStatus (the published form style, explode false). */
const StatusList = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const statuses = value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = statuses.find((s) => !(MAIL_ITEM_STATUSES as readonly string[]).includes(s));
    if (unknown !== undefined) {
      ctx.addIssue({ code: 'custom', message: `${unknown} is not a mail item status (${MAIL_ITEM_STATUSES.join(', ')})` });
      return z.NEVER;
    }
    return statuses as MailItemStatus[];
  });

const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(100),
    page_token: z.string().max(200).optional(),
    lockbox_id: z.string().max(100).optional(),
    'status.in': StatusList.optional(),
    'created_at.after': dateTime.optional(),
    'created_at.before': dateTime.optional(),
  })
  .strict();

const common = { ...GIFT_READ, tag: 'mailItems', versions: ['2026-04-01'] } as const;

export const mailItemRoutes = [
  defineRoute({
    ...common,
    operationId: 'listMailItems',
    method: 'get',
    path: '/v1/mail_items',
    summary: "List the nonprofit's mail items with their scans, newest first",
    query: ListQuery,
    response: z.object({ results: z.array(MailItem), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await mailItemsPage(
        db,
        caller,
        {
          lockboxId: query.lockbox_id,
          statuses: query['status.in'],
          createdAfter: query['created_at.after'] ? new Date(query['created_at.after']) : undefined,
          createdBefore: query['created_at.before'] ? new Date(query['created_at.before']) : undefined,
        },
        decodeCursor(query.page_token, 'page_token'),
        query.limit,
      );
      return listPage(rows, query.limit, toMailItem, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getMailItem',
    method: 'get',
    path: '/v1/mail_items/:id',
    summary: "Get one of the nonprofit's mail items, its scans newest first",
    params: z.object({ id: z.string().min(1).max(100) }),
    response: MailItem,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await mailItemOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The mail item');
      return toMailItem(row);
    },
  }),
];
