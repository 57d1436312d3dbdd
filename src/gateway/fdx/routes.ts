import { accountRoutes } from './account-routes.js';
import { customerRoutes } from './customer-routes.js';
import { statementRoutes } from './statement-routes.js';
import { transactionRoutes } from './transaction-routes.js';

/** The FDX 6.3 operations under /fdx/v6 (openapi/fdx-v6.yaml). */
export const fdxRoutes = [...accountRoutes, ...statementRoutes, ...transactionRoutes, ...customerRoutes];
