import type { Context } from 'koa';
import type { PropertyValueJson } from '../db/schema-gift.js';
import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import { depositDetail, mailItemDetail, type GiftScope, type PropertyWithValue } from '../gift-processing/dashboard-service.js';
import { assignPropertyValue } from '../gift-processing/properties-service.js';
import type { DashboardDeps } from './deps.js';
import { giftScope, showDeposit } from './deposits-page.js';
import { depositsPath, mailPath } from './gift-shown.js';
import type { OrgRequest } from './guards.js';
import { showMailItem } from './mail-page.js';

/**
 * Setting a property's value from a deposit's or mail item's page (docs/gift-processing.md,
 * "On the dashboard"): a CSRF-protected form (orgRoute) of Owners, Admins and Members, for the
 * deposit or one of the donations the page shows; the value is assigned by the API's
 * assignPropertyValue. Done: back to the page (303), which says so; refused: the page again with why.
 */

/** The value a form's `value` field gives the property: '' is no value. */
export function propertyValueOf(property: Pick<PropertyWithValue, 'name' | 'type' | 'options'>, raw: string): PropertyValueJson {
  const text = raw.trim();
  if (property.type === 'user') throw invalid(`${property.name}: a member is chosen through the API`);
  if (text === '') return { type: property.type, empty: true };
  switch (property.type) {
    case 'text':
      if (text.length > 1000) throw invalid(`${property.name}: at most 1,000 characters`);
      return { type: 'text', text_value: text };
    case 'enum':
      if (!property.options.some((o) => o.id === text)) throw invalid(`${property.name}: not one of its options`);
      return { type: 'enum', enum_value_id: text };
    case 'boolean':
      if (text !== 'true' && text !== 'false') throw invalid(`${property.name}: Yes or No`);
      return { type: 'boolean', boolean_value: text === 'true' };
    case 'date': {
      const day = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : undefined;
      if (!day || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text)
        throw invalid(`${property.name}: a date (YYYY-MM-DD)`);
      // The published PropertyValue's dates are RFC 3339 date-times: the day's start, UTC.
      return { type: 'date', date_value: `${text}T00:00:00Z` };
    }
  }
}

/** The resources a page shows, with their properties: the deposit itself and its donations, or a mail item's donations. */
async function resourcesOf(deps: DashboardDeps, scope: GiftScope, page: 'deposit' | 'mail', id: string) {
  if (page === 'deposit') {
    const detail = await depositDetail(deps.db, scope, id);
    if (!detail) throw notFound('There is no such deposit among this organization’s.');
    return [{ id: detail.deposit.id, properties: detail.properties }, ...detail.donations];
  }
  const detail = await mailItemDetail(deps.db, scope, id);
  if (!detail) throw notFound('There is no such mail item among this organization’s.');
  return detail.donations;
}

/** POST /orgs/:ein/deposits/:deposit/properties and /orgs/:ein/mail/:item/properties (resource, property, value). */
export async function submitPropertyValue(deps: DashboardDeps, ctx: Context, request: OrgRequest, page: 'deposit' | 'mail'): Promise<void> {
  const scope = giftScope(deps, request);
  const id = String((page === 'deposit' ? ctx.params.deposit : ctx.params.item) ?? '');
  const resources = await resourcesOf(deps, scope, page, id);
  const resource = resources.find((r) => r.id === request.form.resource);
  if (!resource) throw notFound('There is no such donation or deposit on this page.');
  const property = resource.properties.find((p) => p.id === request.form.property);
  if (!property) throw notFound('There is no such property of this donation or deposit.');
  const show = page === 'deposit' ? showDeposit : showMailItem;
  try {
    await assignPropertyValue(deps.db, scope, property.id, propertyValueOf(property, request.form.value ?? ''), [resource.id]);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid') return show(deps, ctx, request, { error: error.sentence, status: 400 });
    throw error;
  }
  const back = page === 'deposit' ? `${depositsPath(request.organization.ein)}/${id}` : `${mailPath(request.organization.ein)}/${id}`;
  ctx.status = 303;
  ctx.redirect(`${back}?set=${encodeURIComponent(property.id)}`);
}
