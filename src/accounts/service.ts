import type { Db } from '../db/database.js';
import type { Organization, OrganizationKind, Role } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { formatEin, parseEin } from './ein.js';
import { canonicalEmail, hasUnsafeCharacters, UNSAFE_EMAIL } from './email-address.js';
import { conflict, invalid, notFound } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { hashPassword, type PasswordParams } from './passwords.js';
import { requireAcceptablePassword } from './password-policy.js';
import * as repo from './repository.js';
import { inTransaction, type Executor } from '../db/executor.js';
import { provisionGrantmaker, provisionProcessing } from '../grantmaking/provisioning.js';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'read_only'];
export const ORGANIZATION_KINDS: readonly OrganizationKind[] = ['nonprofit', 'fund_provider', 'grantmaker', 'platform', 'lockbox_provider'];

export interface OrganizationView {
  id: string;
  ein: string;
  name: string;
  kind: OrganizationKind;
}

export function organizationView(row: Organization): OrganizationView {
  return { id: row.id, ein: formatEin(row.ein), name: row.name, kind: row.kind };
}

/**
 * The address every form and command stores and looks up (email-address.ts): NFC, trimmed,
 * lower case; refused (400) with control or invisible formatting characters, or when it is
 * not an address.
 */
export function normaliseEmail(input: string): string {
  const email = canonicalEmail(input);
  if (hasUnsafeCharacters(email)) throw invalid(UNSAFE_EMAIL);
  if (email.length > 254 || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw invalid(`"${input}" is not an email address`);
  return email;
}

function requireEin(input: string): string {
  const ein = parseEin(input);
  if (!ein) throw invalid(`"${input}" is not an EIN (expected 12-3456789 or 123456789)`);
  return ein;
}

export function requireRole(input: string): Role {
  if (!(ROLES as readonly string[]).includes(input)) throw invalid(`role must be one of ${ROLES.join(', ')}`);
  return input as Role;
}

export async function requireOrganization(db: Executor, einInput: string): Promise<Organization> {
  const org = await repo.findOrganizationByEin(db, requireEin(einInput));
  if (!org) throw notFound(`no organization with EIN ${einInput}`);
  return org;
}

export async function requireUser(db: Executor, emailInput: string) {
  const user = await repo.findUserByEmail(db, normaliseEmail(emailInput));
  if (!user) throw notFound(`no user with email ${emailInput}`);
  return user;
}

export async function addOrganization(db: Db, input: { ein: string; name: string; kind?: string }): Promise<OrganizationView> {
  const ein = requireEin(input.ein);
  const name = input.name.trim();
  if (name.length < 1 || name.length > 200) throw invalid('name must be 1 to 200 characters');
  const kind = input.kind ?? 'nonprofit';
  if (!(ORGANIZATION_KINDS as readonly string[]).includes(kind)) throw invalid(`kind must be one of ${ORGANIZATION_KINDS.join(', ')}`);
  return inTransaction(db, async (trx) => {
    const row = await repo
      .insertOrganization(trx, { ein, name, kind: kind as OrganizationKind })
      .catch((error) => mapUniqueViolation(error, { organizations_ein_key: `an organization with EIN ${formatEin(ein)} already exists` }));
    await recordAudit(trx, { event: 'organization.created', organizationId: row.id, details: { ein: formatEin(ein), kind } });
    // A grantmaker starts with its financial accounts and programs (docs/grantmaking.md, "Provisioning").
    if (row.kind === 'grantmaker') await provisionGrantmaker(trx, row.id);
    // Nonprofits and platforms are paid DAFpay grants into a processing account (docs/giving.md, "Money").
    if (row.kind === 'nonprofit' || row.kind === 'platform') await provisionProcessing(trx, row.id);
    return organizationView(row);
  });
}

export async function addUser(db: Db, input: { email: string; password: string; displayName?: string }, params: PasswordParams) {
  const email = normaliseEmail(input.email);
  requireAcceptablePassword(input.password, email);
  if (await repo.findUserByEmail(db, email)) throw conflict(`a user with email ${email} already exists`);
  const passwordHash = await hashPassword(input.password, params);
  return inTransaction(db, async (trx) => {
    const row = await repo
      .insertUser(trx, { email, password_hash: passwordHash, display_name: input.displayName ?? null })
      .catch((error) => mapUniqueViolation(error, { users_email_key: `a user with email ${email} already exists` }));
    await recordAudit(trx, { event: 'user.created', actorUserId: row.id, details: { email } });
    return { id: row.id, email: row.email };
  });
}
