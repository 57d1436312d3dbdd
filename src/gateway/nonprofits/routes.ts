import { z } from 'zod';
import { parseEin } from '../../accounts/ein.js';
import { resourceNotFound } from '../routing/problems.js';
import { invalid } from '../../errors/domain-error.js';
import { defineRoute } from '../routing/route-spec.js';
import { nonprofitByEin } from './service.js';

const Nonprofit = z.object({
  id: z.string(),
  name: z.string(),
  ein: z.string().regex(/^\d{9}$/),
  address: z
    .object({
      line1: z.string(),
      line2: z.string().optional(),
      city: z.string(),
      state: z.string(),
      postal_code: z.string(),
      country: z.string(),
    })
    .optional(),
  createdAt: z.string().datetime(),
  updatedAt: z.string().datetime(),
  inGoodStanding: z.boolean(),
  isDafPayNetwork: z.boolean(),
  claimed: z.boolean(),
});

export const nonprofitRoutes = [
  defineRoute({
    operationId: 'get-nonprofit-by-ein',
    method: 'get',
    path: '/v1/nonprofit/:ein',
    summary: "A nonprofit's public record by EIN (12-3456789 or 123456789); a directory of every nonprofit",
    tag: 'Nonprofits',
    // Shape of the 2023-01-01 document, served under both accepted versions (docs/api.md, "Resource gateway (API hosts)").
    versions: ['2026-04-01', '2026-01-15'],
    area: 'nonprofits',
    access: 'read',
    credentials: 'any',
    params: z.object({ ein: z.string().max(20) }),
    response: Nonprofit,
    errors: [400, 401, 403, 404],
    async handler({ db, params }) {
      const ein = parseEin(params.ein);
      if (!ein) throw invalid('ein must be nine digits, written 123456789 or 12-3456789.');
      const record = await nonprofitByEin(db, ein);
      // A fund provider is not a nonprofit record: 404 like any unknown EIN.
      if (!record) throw resourceNotFound('The nonprofit');
      const { organization: org, claimed } = record;
      const hasAddress = org.address_line1 && org.city && org.region && org.postal_code;
      return {
        id: org.id,
        name: org.name,
        ein: org.ein,
        ...(hasAddress
          ? {
              address: {
                line1: org.address_line1!,
                ...(org.address_line2 ? { line2: org.address_line2 } : {}),
                city: org.city!,
                state: org.region!,
                postal_code: org.postal_code!,
                country: org.country,
              },
            }
          : {}),
        createdAt: org.created_at.toISOString(),
        updatedAt: org.updated_at.toISOString(),
        inGoodStanding: true,
        isDafPayNetwork: false,
        claimed,
      };
    },
  }),
];
