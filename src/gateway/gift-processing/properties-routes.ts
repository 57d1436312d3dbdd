import { z } from 'zod';
import type { PropertyValueJson } from '../../db/schema-gift.js';
import { invalid } from '../../errors/domain-error.js';
import {
  assignPropertyValue,
  optionsPage,
  propertiesPage,
  propertyForOptions,
  propertyOf,
  type OptionCursor,
} from '../../gift-processing/properties-service.js';
import { decodeCursor, listPage } from '../routing/pagination.js';
import { resourceNotFound } from '../routing/problems.js';
import { defineRoute } from '../routing/route-spec.js';
import { GIFT_READ } from './gift-callers.js';
import { Property, PropertyOptionValue, PropertyValue, ResourceType, toOption, toProperty } from './gift-shapes.js';
import { PageQuery } from './payment-sources-routes.js';

/** An options page token: the last option's sort key and id (options go in their order, not newest first). */
function encodeOptionCursor(cursor: OptionCursor): string {
  return Buffer.from(JSON.stringify(['o', cursor.key, cursor.id])).toString('base64url');
}

function decodeOptionCursor(token: string | undefined): OptionCursor | undefined {
  if (token === undefined || token === '') return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3 && value[0] === 'o' && typeof value[1] === 'string' && typeof value[2] === 'string') {
      const [, key, id] = value as [string, string, string];
      if (key.length <= 40 && id.length <= 100 && (/^[0-9]{1,9}$/.test(key) || !Number.isNaN(Date.parse(key)))) return { key, id };
    }
  } catch {
    /* fall through */
  }
  throw invalid('page_token is not a page token this API returned.');
}

const ListQuery = PageQuery.extend({ resource_type: ResourceType.optional() }).strict();

const AssignBody = z
  .object({
    value: PropertyValue.strict(),
    resources: z.object({ ids: z.array(z.string().min(1).max(100)).min(1).max(100, 'at most 100 resources at a time') }).strict(),
  })
  .strict();

const common = { ...GIFT_READ, tag: 'properties', versions: ['2026-04-01', '2026-01-15'] } as const;
const Id = z.object({ id: z.string().min(1).max(100) });

export const propertyRoutes = [
  defineRoute({
    ...common,
    operationId: 'listProperties',
    method: 'get',
    path: '/v1/properties',
    summary: "List the nonprofit's properties, newest first, each with its first 25 options",
    query: ListQuery,
    response: z.object({ results: z.array(Property), next_page_token: z.string().optional() }),
    errors: [400, 401, 403],
    async handler({ db, caller, query }) {
      const rows = await propertiesPage(
        db,
        caller,
        { resourceType: query.resource_type },
        decodeCursor(query.page_token, 'page_token'),
        query.limit,
      );
      return listPage(rows, query.limit, toProperty, 'next_page_token');
    },
  }),
  defineRoute({
    ...common,
    operationId: 'getProperty',
    method: 'get',
    path: '/v1/properties/:id',
    summary: "Get one of the nonprofit's properties with its first 25 options (a user property's are the organization's members)",
    params: Id,
    response: Property,
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params }) {
      const row = await propertyOf(db, caller, params.id);
      if (!row) throw resourceNotFound('The property');
      return toProperty(row);
    },
  }),
  defineRoute({
    ...common,
    operationId: 'listPropertyOptions',
    method: 'get',
    path: '/v1/properties/:id/options',
    summary: "List an enum property's options in their order, or a user property's (the organization's members)",
    params: Id,
    query: PageQuery,
    response: z.object({ results: z.array(PropertyOptionValue), next_page_token: z.string().optional() }),
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, query }) {
      const property = await propertyForOptions(db, caller, params.id);
      if (!property) throw resourceNotFound('The property');
      const rows = await optionsPage(db, property, decodeOptionCursor(query.page_token), query.limit);
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      const next = rows.length > query.limit && last ? encodeOptionCursor({ key: last.key, id: last.id }) : undefined;
      return { results: items.map(toOption), ...(next === undefined ? {} : { next_page_token: next }) };
    },
  }),
  defineRoute({
    ...common,
    operationId: 'assignProperty',
    method: 'post',
    path: '/v1/properties/:id/assign',
    summary: "Set (or, with empty: true, remove) the property on up to 100 of the nonprofit's donations or deposits, all or none",
    access: 'write',
    params: Id,
    body: AssignBody,
    response: z.object({ num_updated: z.number().int().describe('Resources whose value changed') }),
    errors: [400, 401, 403, 404],
    async handler({ db, caller, params, body }) {
      const input = body as z.output<typeof AssignBody>;
      const numUpdated = await assignPropertyValue(db, caller, params.id, input.value as PropertyValueJson, input.resources.ids);
      return { num_updated: numUpdated };
    },
  }),
];
