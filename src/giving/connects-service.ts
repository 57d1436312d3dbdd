import type { Db } from '../db/database.js';
import { ulid } from '../db/ids.js';
import type { Environment, OrganizationKind } from '../db/schema.js';
import { forbidden, notFound } from '../errors/domain-error.js';
import { findDirectoryOrganizationById } from '../directory/repository.js';
import {
  findConnectOfRecipient,
  findOrganizationEin,
  findOwnedConnect,
  insertConnectOnce,
  type ConnectRow,
} from './connects-repository.js';

export type { ConnectRow };

/** Who creates or reads connects: an organization in one environment (docs/giving.md, "Connects"). */
export interface ConnectOwner {
  organizationId: string;
  organizationKind: OrganizationKind;
  environment: Environment;
  /** api_key:<id>, or the OAuth client's id. */
  createdBy: string;
}

export interface ConnectInput {
  organizationId: string;
  contact: Record<string, string>;
  name?: string;
  metadata?: Record<string, string>;
}

/** A connect's id: test_<ulid> in the sandbox, live_<ulid> in production (the published cid). */
export function connectId(environment: Environment): string {
  return `${environment === 'sandbox' ? 'test' : 'live'}_${ulid()}`;
}

/**
 * The owner's connect for a directory nonprofit, created the first time (created: true) and
 * answered as it is after. A platform may create one for any directory organization; a nonprofit
 * only for its own directory entry (matched by EIN).
 */
export async function createOrGetConnect(
  db: Db,
  owner: ConnectOwner,
  input: ConnectInput,
): Promise<{ connect: ConnectRow; created: boolean }> {
  if (owner.organizationKind !== 'platform' && owner.organizationKind !== 'nonprofit')
    throw forbidden('Connects are created by giving platforms and nonprofits.');
  const recipient = await findDirectoryOrganizationById(db, input.organizationId);
  if (!recipient) throw notFound('The organization was not found.');
  if (owner.organizationKind === 'nonprofit') {
    const own = await findOrganizationEin(db, owner.organizationId);
    if (own !== recipient.ein) throw forbidden('A nonprofit creates connects for its own organization only.');
  }
  const scope = { organizationId: owner.organizationId, environment: owner.environment };
  const inserted = await insertConnectOnce(db, {
    id: connectId(owner.environment),
    environment: owner.environment,
    organization_id: owner.organizationId,
    name: input.name ?? recipient.name,
    recipient_organization_id: recipient.id,
    contact: JSON.stringify(input.contact),
    metadata: JSON.stringify(input.metadata ?? {}),
    created_by: owner.createdBy,
  });
  if (inserted) return { connect: inserted, created: true };
  const existing = await findConnectOfRecipient(db, scope, recipient.id);
  if (!existing) throw new Error('connect insert conflicted with no connect of its recipient');
  return { connect: existing, created: false };
}

/** One of the owner's connects; another organization's or environment's is not found. */
export async function connectOf(db: Db, scope: { organizationId: string; environment: Environment }, id: string): Promise<ConnectRow> {
  const row = await findOwnedConnect(db, scope, id);
  if (!row) throw notFound('The connect was not found.');
  return row;
}

/** Whether a connect is the owner's (another organization's or environment's is unknown to it). */
export async function ownsConnect(db: Db, scope: { organizationId: string; environment: Environment }, id: string): Promise<boolean> {
  return (await findOwnedConnect(db, scope, id)) !== undefined;
}
