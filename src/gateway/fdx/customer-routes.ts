import { defineRoute } from '../routing/route-spec.js';
import { organizationOf } from './accounts-service.js';
import { FDX_ROUTE } from './account-routes.js';
import { customerNotFound } from './problems.js';
import { Customer, toCustomer } from './shapes.js';

export const customerRoutes = [
  defineRoute({
    ...FDX_ROUTE,
    operationId: 'getCurrentCustomer',
    method: 'get',
    path: '/fdx/v6/customers/current',
    summary: 'The authorizing organization (customerId = organizationId), from the token alone',
    tag: 'FDX Customers',
    response: Customer,
    errors: [401, 403, 404],
    async handler({ db, caller }) {
      const org = await organizationOf(db, caller.organizationId);
      if (!org) throw customerNotFound();
      return toCustomer(org);
    },
  }),
];
