import { accountRoutes } from './account-routes.js';
import { consentRoutes } from './consent-routes.js';
import { heldToConsent } from './consent-scope.js';
import { customerRoutes } from './customer-routes.js';
import { statementRoutes } from './statement-routes.js';
import { transactionRoutes } from './transaction-routes.js';

/**
 * The FDX 6.3 operations under /fdx/v6 (openapi/fdx-v6.yaml): the data operations, each held to
 * the token's consent when it has one (consent-scope.ts), and the Consent API, which is about
 * the consent itself and so is not.
 */
export const fdxRoutes = [
  ...heldToConsent([...accountRoutes, ...statementRoutes, ...transactionRoutes, ...customerRoutes]),
  ...consentRoutes,
];
