import { z } from 'zod';
import {
  recordAddressSuggestions,
  recordContactSuggestions,
  type AddressEntry,
  type ContactEntry,
} from '../../directory/suggestions-service.js';
import { GRANTMAKERS } from '../auth/require-caller-kind.js';
import { defineRoute } from '../routing/route-spec.js';

/** Up to 500 entries an upload (the published request bodies' maxItems). */
const MAX_ENTRIES = 500;

const AddressEntrySchema = z.object({
  ein: z.string().max(20),
  line1: z.string().trim().min(1).max(255),
  line2: z.string().max(255).optional(),
  city: z.string().trim().min(1).max(255),
  state: z.string().regex(/^[A-Z]{2}$/, 'must be a two-letter US state code in capitals'),
  zip: z.string().regex(/^\d{5}(-\d{4})?$/, 'must be five digits, optionally -1234'),
});

const ContactEntrySchema = z.object({
  ein: z.string().max(20),
  email: z.string().email().max(255),
  phone: z.string().max(255).optional(),
  first_name: z.string().max(255).optional(),
  last_name: z.string().max(255).optional(),
});

const common = {
  versions: ['2026-04-01', '2026-01-15'] as const,
  area: 'organizations',
  credentials: 'any' as const,
  callers: GRANTMAKERS,
  access: 'write' as const,
  method: 'post' as const,
  // The published success is 200 with no content ("All … were accepted").
  status: 200,
  response: z.undefined(),
  errors: [400, 401, 403, 404],
};

export const suggestionRoutes = [
  defineRoute({
    ...common,
    tag: 'Nonprofit Addresses',
    operationId: 'createNonprofitAddressSuggestion',
    path: '/v1/nonprofit_addresses',
    summary: 'Upload mailing addresses for directory organizations, by EIN, as suggestions recorded for review',
    body: z.object({ entries: z.array(AddressEntrySchema).min(1).max(MAX_ENTRIES) }),
    async handler({ db, caller, body }) {
      const { entries } = body as { entries: AddressEntry[] };
      await recordAddressSuggestions(db, { environment: caller.environment, grantmakerId: caller.organizationId }, entries);
    },
  }),
  defineRoute({
    ...common,
    tag: 'Nonprofit Contacts',
    operationId: 'createNonprofitContactSuggestion',
    path: '/v1/nonprofit_contacts',
    summary: 'Upload contacts for directory organizations, by EIN, as suggestions recorded for review',
    body: z.object({ entries: z.array(ContactEntrySchema).min(1).max(MAX_ENTRIES) }),
    async handler({ db, caller, body }) {
      const { entries } = body as { entries: ContactEntry[] };
      await recordContactSuggestions(db, { environment: caller.environment, grantmakerId: caller.organizationId }, entries);
    },
  }),
];
