import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { findConsentParties, type ConsentPartiesRow } from './consent-parties-repository.js';

/** The parties a ConsentGrant names: its data recipient (the client) and its data provider's customer (the organization). */
export function consentParties(db: Db, environment: Environment, clientId: string, organizationId: string): Promise<ConsentPartiesRow> {
  return findConsentParties(db, environment, clientId, organizationId);
}
