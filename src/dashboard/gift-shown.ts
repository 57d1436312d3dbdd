import type { PostalAddressJson } from '../db/schema-gift.js';
import type { DepositSummary, PropertyWithValue } from '../gift-processing/dashboard-service.js';
import { shownDate } from './dates.js';
import type { PropertyForms } from './gift-view-models.js';
import { dollars } from './money.js';
import { orgPath } from './paths.js';

/** How the gift-processing pages word their rows (docs/gift-processing.md, "On the dashboard"). */

export const DEPOSIT_STATUS_LABELS: Readonly<Record<string, string>> = { pending: 'Pending', complete: 'Complete', failed: 'Failed' };
export const MAIL_STATUS_LABELS: Readonly<Record<string, string>> = {
  processing: 'Processing',
  needs_review: 'Needs review',
  processed: 'Processed',
  rejected: 'Rejected',
};
export const IMAGE_LABELS: Readonly<Record<string, string>> = {
  check_front: 'Check, front',
  check_back: 'Check, back',
  envelope: 'Envelope',
  correspondence: 'Letter',
};

export function giftTone(status: string): 'ok' | 'bad' | 'warn' | '' {
  if (status === 'complete' || status === 'processed') return 'ok';
  if (status === 'failed' || status === 'rejected') return 'bad';
  if (status === 'needs_review' || status === 'pending') return 'warn';
  return '';
}

/** A lockbox as its members know it: the PO box's location and address. */
export function lockboxLabel(lockbox: { locationId: string; address: PostalAddressJson }): string {
  const a = lockbox.address;
  const street = [a.line1, a.line2].filter(Boolean).join(', ');
  return `${lockbox.locationId} · ${street}, ${a.city}, ${a.state} ${a.postal_code}`;
}

export const depositsPath = (ein: string) => orgPath(ein, 'deposits');
export const mailPath = (ein: string) => orgPath(ein, 'mail');

export function shownDeposit(ein: string, d: DepositSummary) {
  return {
    href: `${depositsPath(ein)}/${d.id}`,
    amount: dollars(d.amount),
    status: DEPOSIT_STATUS_LABELS[d.status] ?? d.status,
    tone: giftTone(d.status),
    sourceName: d.sourceName,
    settled: shownDate(d.settledAt),
    created: shownDate(d.createdAt),
    donations: d.donations,
  };
}

function shownValue(p: PropertyWithValue): string {
  const v = p.value;
  if (!v || v.empty) return '—';
  switch (v.type) {
    case 'text':
      return v.text_value ?? '—';
    case 'enum':
      return p.options.find((o) => o.id === v.enum_value_id)?.name ?? '—';
    case 'boolean':
      return v.boolean_value === undefined ? '—' : v.boolean_value ? 'Yes' : 'No';
    case 'date':
      return v.date_value?.slice(0, 10) ?? '—';
    case 'user':
      return p.options.find((o) => o.id === v.user_value_id?.toLowerCase())?.name ?? v.user_value_id ?? '—';
  }
}

/**
 * The properties of one donation or deposit, with the controls of their form. `action`:
 * where a value is set, undefined when the viewer may not set one. User properties are shown,
 * not set here (their values are members, chosen through the API).
 */
export function propertyForms(resourceId: string, properties: PropertyWithValue[], action: string | undefined): PropertyForms {
  return {
    action,
    resourceId,
    fields: properties.map((p) => ({
      id: p.id,
      name: p.name,
      type: p.type,
      shown: shownValue(p),
      control: `prop-${resourceId}-${p.id}`,
      text: p.type === 'text' ? (p.value?.text_value ?? '') : p.type === 'date' ? (p.value?.date_value?.slice(0, 10) ?? '') : '',
      options:
        p.type === 'enum'
          ? p.options.map((o) => ({ value: o.id, label: o.name, selected: p.value?.enum_value_id === o.id }))
          : p.type === 'boolean'
            ? [
                { value: 'true', label: 'Yes', selected: p.value?.boolean_value === true },
                { value: 'false', label: 'No', selected: p.value?.boolean_value === false },
              ]
            : [],
    })),
  };
}

/** The donations of a mail item or deposit, with their properties' forms. */
export function shownDonations(
  donations: { id: string; amount: number; donor: string; memo: string; purpose: string; properties: PropertyWithValue[] }[],
  action: string | undefined,
) {
  return donations.map((d) => ({
    id: d.id,
    amount: dollars(d.amount),
    donor: d.donor,
    memo: d.memo,
    purpose: d.purpose,
    properties: propertyForms(d.id, d.properties, action),
  }));
}

/** The notice after a property's value was set (the form's redirect names it: ?set=<property id>). */
export function setNotice(set: unknown, properties: readonly PropertyWithValue[]): string | undefined {
  if (typeof set !== 'string') return undefined;
  const property = properties.find((p) => p.id === set);
  return property ? `${property.name} is set.` : undefined;
}
