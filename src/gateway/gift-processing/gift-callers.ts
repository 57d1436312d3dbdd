import type { OrganizationKind } from '../../db/schema.js';

/** Gift processing's readers (docs/api.md, "Organization kinds"): nonprofits, for their own records. */
export const GIFT_READERS: readonly OrganizationKind[] = ['nonprofit'];

/** Who answers PO box requests (provisionMailbox). */
export const LOCKBOX_PROVIDERS: readonly OrganizationKind[] = ['lockbox_provider'];

/** What every gift-processing read shares (docs/gift-processing.md, "The API"). */
export const GIFT_READ = {
  area: 'donations',
  access: 'read',
  credentials: 'any',
  callers: GIFT_READERS,
} as const;
