import { z } from 'zod';
import type { OrganizationRecord } from '../../directory/organization-service.js';
import type { DirectoryOrganization } from '../../directory/search-service.js';

/**
 * The published OrganizationSummary and Organization of a directory organization
 * (docs/directory.md, "The Organization answer"): a field the directory does not hold is left
 * out, never null.
 */

export function organizationSummaryView(org: DirectoryOrganization) {
  return {
    id: org.id,
    ein: org.ein,
    name: org.name,
    ...(org.city ? { city: org.city } : {}),
    ...(org.state ? { state: org.state } : {}),
  };
}

/** The published Organization as served (organizationView's shape). */
export const Organization = z.object({
  id: z.string(),
  ein: z.string(),
  name: z.string(),
  physical_address: z
    .object({ line1: z.string(), city: z.string(), state: z.string(), postal_code: z.string(), country: z.string() })
    .optional(),
  incorporation: z.object({ ruling_date: z.string() }).optional(),
  claimed: z.boolean(),
});

export function organizationView({ organization: org, claimed }: OrganizationRecord) {
  const address =
    org.street && org.city && org.state && org.postal_code
      ? { line1: org.street, city: org.city, state: org.state, postal_code: org.postal_code, country: 'US' }
      : undefined;
  return {
    id: org.id,
    ein: org.ein,
    name: org.name,
    ...(address ? { physical_address: address } : {}),
    // The IRS ruling month, YYYYMM in the file, is published as an ISO 8601 year-month.
    ...(org.ruling ? { incorporation: { ruling_date: `${org.ruling.slice(0, 4)}-${org.ruling.slice(4)}` } } : {}),
    claimed,
  };
}
