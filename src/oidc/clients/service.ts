import crypto from 'node:crypto';
import argon2 from 'argon2';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/executor.js';
import type { Environment } from '../../db/schema.js';
import { conflict, invalid, notFound } from '../../errors/domain-error.js';
import type { PasswordParams } from '../../accounts/passwords.js';
import { readClientsFile, updateClientsFile } from './file-store.js';
import { listClients, replaceAllClients, type ClientRow } from './repository.js';
import { clientEntrySchema, ClientRegistryError, type ClientEntry, type ClientEntryInput } from './schema.js';

/** 256 bits, base64url: what the CLI shows once and never stores. */
export function generateClientSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function generateClientId(environment: Environment): string {
  return `${environment === 'production' ? 'live' : 'test'}_${crypto.randomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
}

export function hashClientSecret(secret: string, params: PasswordParams): Promise<string> {
  return argon2.hash(secret, { type: argon2.argon2id, memoryCost: params.memoryKib, timeCost: params.timeCost, parallelism: params.parallelism });
}

export interface RegistryContext {
  db: Db;
  clientsFile: string;
  passwordParams: PasswordParams;
}

/** Makes the database mirror the file; the running servers read clients from the database. */
export async function syncClients(db: Db, entries: readonly ClientEntry[]): Promise<void> {
  await inTransaction(db, (trx) => replaceAllClients(trx, entries));
}

function describeProblems(entry: unknown): string | undefined {
  const parsed = clientEntrySchema.safeParse(entry);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  const field = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.map(String).join('.');
  return `${field}: ${issue.message}`;
}

export interface AddClientInput {
  environment: string;
  name: string;
  logoUri?: string;
  redirectUris: string[];
  scopes: string[];
  subjectType?: string;
  ipAllowList?: string[];
  /** Approving needs a second factor. */
  requireMfa?: boolean;
  /** For seeding: a given id; normally generated. */
  clientId?: string;
}

export async function addClient(ctx: RegistryContext, input: AddClientInput): Promise<{ client_id: string; client_secret: string; environment: Environment }> {
  if (input.environment !== 'production' && input.environment !== 'sandbox') throw invalid('environment: must be production or sandbox');
  const environment = input.environment;
  const secret = generateClientSecret();
  const candidate: ClientEntryInput = {
    environment,
    client_id: input.clientId ?? generateClientId(environment),
    // Validate the shape before paying for the hash.
    client_secret_hash: '$argon2id$placeholder',
    name: input.name,
    ...(input.logoUri ? { logo_uri: input.logoUri } : {}),
    redirect_uris: input.redirectUris,
    scopes: input.scopes as ClientEntryInput['scopes'],
    subject_type: (input.subjectType ?? 'user') as 'user' | 'organization',
    ip_allow_list: input.ipAllowList ?? [],
    require_mfa: input.requireMfa ?? false,
  };
  const problem = describeProblems(candidate);
  if (problem) throw invalid(problem);
  const entry = clientEntrySchema.parse({ ...candidate, client_secret_hash: await hashClientSecret(secret, ctx.passwordParams) });
  await updateClientsFile(
    ctx.clientsFile,
    (current) => {
      if (current.some((c) => c.client_id === entry.client_id)) throw conflict(`client_id ${entry.client_id} already exists`);
      return [...current, entry];
    },
    (entries) => syncClients(ctx.db, entries),
  );
  return { client_id: entry.client_id, client_secret: secret, environment };
}

export async function rotateClientSecret(ctx: RegistryContext, clientId: string): Promise<{ client_id: string; client_secret: string }> {
  const secret = generateClientSecret();
  const hash = await hashClientSecret(secret, ctx.passwordParams);
  await updateClientsFile(
    ctx.clientsFile,
    (current) => {
      if (!current.some((c) => c.client_id === clientId)) throw notFound(`no client ${clientId}`);
      return current.map((c) => (c.client_id === clientId ? { ...c, client_secret_hash: hash } : c));
    },
    (entries) => syncClients(ctx.db, entries),
  );
  return { client_id: clientId, client_secret: secret };
}

export async function removeClient(ctx: RegistryContext, clientId: string): Promise<{ client_id: string }> {
  await updateClientsFile(
    ctx.clientsFile,
    (current) => {
      if (!current.some((c) => c.client_id === clientId)) throw notFound(`no client ${clientId}`);
      return current.filter((c) => c.client_id !== clientId);
    },
    (entries) => syncClients(ctx.db, entries),
  );
  return { client_id: clientId };
}

/** A client as the CLI lists it: the row without its secret hash and timestamps. */
export type ClientView = Omit<ClientRow, 'client_secret_hash' | 'created_at' | 'updated_at'>;

export async function listRegisteredClients(db: Db, environment?: Environment): Promise<ClientView[]> {
  return (await listClients(db, environment)).map((row) => ({
    client_id: row.client_id,
    environment: row.environment,
    name: row.name,
    logo_uri: row.logo_uri,
    redirect_uris: row.redirect_uris,
    scopes: row.scopes,
    subject_type: row.subject_type,
    ip_allow_list: row.ip_allow_list,
    require_mfa: row.require_mfa,
  }));
}

/** Validates the file; returns its problems (empty when valid). */
export function validateClientsFile(file: string): { valid: boolean; problems: string[]; count: number } {
  try {
    return { valid: true, problems: [], count: readClientsFile(file).entries.length };
  } catch (error) {
    if (error instanceof ClientRegistryError) return { valid: false, problems: [...error.problems], count: 0 };
    throw error;
  }
}
