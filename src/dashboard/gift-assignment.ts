import type { PropertyValueJson } from '../db/schema-gift.js';
import type { GiftScope } from '../gift-processing/dashboard-service.js';
import type { DashboardDeps } from './deps.js';

/** How a property's value is assigned (properties-service.ts's assignPropertyValue). */
export type AssignPropertyValue = (
  db: DashboardDeps['db'],
  scope: GiftScope,
  propertyId: string,
  value: PropertyValueJson,
  resourceIds: string[],
) => Promise<unknown>;

/** The assignment the forms use; undefined while there is none (the pages then show values without forms). */
export const propertyAssignment: AssignPropertyValue | undefined = undefined;
