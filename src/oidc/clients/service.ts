import crypto from 'node:crypto';
import os from 'node:os';
import argon2 from 'argon2';
import type { Db } from '../../db/database.js';
import { inTransaction, type Executor } from '../../db/executor.js';
import type { Environment } from '../../db/schema.js';
import { conflict, invalid, notFound } from '../../errors/domain-error.js';
import type { PasswordParams } from '../../accounts/passwords.js';
import { readClientsFile, updateClientsFile, type ClientsSnapshot } from './file-store.js';
import {
  currentRevision,
  listClients,
  lockRegistry,
  recordRevision,
  replaceAllClients,
  revisionWithContent,
  type ClientRow,
  type RegistryRevisionRow,
} from './repository.js';
import {
  judgeClientsFile,
  refusalMessage,
  standingOf,
  type FileState,
  type Judged,
  type ParentFile,
  type RegistryHead,
  type RegistryStanding,
} from './revision.js';
import {
  clientEntrySchema,
  ClientRegistryError,
  profileRuleProblems,
  registryContentHash,
  type ClientEntry,
  type ClientEntryInput,
} from './schema.js';
import type { Profile } from '../../webhooks/targets.js';

/** 256 bits, base64url: what the CLI shows once and never stores. */
export function generateClientSecret(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function generateClientId(environment: Environment): string {
  return `${environment === 'production' ? 'live' : 'test'}_${crypto.randomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
}

export function hashClientSecret(secret: string, params: PasswordParams): Promise<string> {
  return argon2.hash(secret, {
    type: argon2.argon2id,
    memoryCost: params.memoryKib,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
  });
}

export interface RegistryContext {
  db: Db;
  clientsFile: string;
  passwordParams: PasswordParams;
  /** The deployment's profile, whose address rules a jwks_uri is held to (the production rules when not given). */
  profile?: Profile;
}

function fileState(snapshot: ClientsSnapshot): FileState {
  return {
    exists: snapshot.exists,
    revision: snapshot.revision,
    contentHash: snapshot.contentHash,
    clientIds: snapshot.entries.map((e) => e.client_id),
  };
}

function headOf(row: RegistryRevisionRow): RegistryHead {
  return { revision: row.revision, contentHash: row.content_hash, appliedAt: row.applied_at, appliedBy: row.applied_by };
}

function entryOf(row: ClientRow): ClientEntry {
  const {
    environment,
    client_id,
    client_secret_hash,
    name,
    logo_uri,
    redirect_uris,
    post_logout_redirect_uris,
    scopes,
    subject_type,
    ip_allow_list,
    require_mfa,
    profile,
    jwks,
    jwks_uri,
  } = row;
  return {
    environment,
    client_id,
    ...(client_secret_hash === null ? {} : { client_secret_hash }),
    name,
    ...(logo_uri === null ? {} : { logo_uri }),
    redirect_uris,
    post_logout_redirect_uris,
    scopes: scopes as ClientEntry['scopes'],
    subject_type,
    ip_allow_list,
    require_mfa,
    profile,
    ...(jwks === null ? {} : { jwks }),
    ...(jwks_uri === null ? {} : { jwks_uri }),
  };
}

/** Judges the file against the registry as the database holds it now (docs/operations.md, "The clients file across machines"). */
async function judge(db: Executor, snapshot: ClientsSnapshot, parent?: ParentFile): Promise<Judged> {
  const row = await currentRevision(db);
  const file = fileState(snapshot);
  if (!row) {
    const rows = await listClients(db);
    return {
      verdict: judgeClientsFile(
        file,
        { contentHash: registryContentHash(rows.map(entryOf)), clientIds: rows.map((r) => r.client_id) },
        { parent },
      ),
      head: undefined,
    };
  }
  const head = headOf(row);
  const earlier = file.contentHash === head.contentHash ? undefined : (await revisionWithContent(db, file.contentHash))?.revision;
  return { verdict: judgeClientsFile(file, head, { parent, earlier }), head };
}

/** Who applies a revision, as `applied_by` records it. */
export function appliedBy(what: string, file: string): string {
  return `${what} on ${os.hostname()} (${file})`;
}

export interface Reconciled extends Judged {
  /** The revision the registry is at afterwards (undefined: none recorded). */
  revision: number | undefined;
  /** Why the file was not applied (absent, older or diverging), in one line that starts with its path. */
  refusal?: string;
}

/**
 * Makes the file the registry when the rules allow it (newer, or an edit of the current
 * revision), under the registry's lock; an older or diverging file changes nothing and the
 * verdict says why. The running servers read clients from the database.
 */
export function reconcileClientsFile(
  db: Db,
  snapshot: ClientsSnapshot,
  options: { file: string; parent?: ParentFile; appliedBy: string },
): Promise<Reconciled> {
  return inTransaction(db, async (trx) => {
    await lockRegistry(trx);
    const judged = await judge(trx, snapshot, options.parent);
    const { verdict, head } = judged;
    if (verdict.kind === 'absent' || verdict.kind === 'older' || verdict.kind === 'diverging')
      return { ...judged, revision: head?.revision, refusal: refusalMessage(options.file, fileState(snapshot), verdict, head) };
    if (verdict.kind !== 'apply') return { ...judged, revision: head?.revision };
    await replaceAllClients(trx, snapshot.entries);
    await recordRevision(trx, {
      revision: verdict.revision,
      content_hash: snapshot.contentHash,
      clients: snapshot.entries.length,
      applied_by: options.appliedBy,
    });
    return { ...judged, revision: verdict.revision };
  });
}

/**
 * An admin change of the registry: under the file's lock and the registry's, the file must be
 * the current revision (or newer, or an edit of it); the change then becomes the next
 * revision, in the database and in the file. A stale file is refused and left as it was.
 */
async function changeRegistry(ctx: RegistryContext, action: string, change: (entries: ClientEntry[]) => ClientEntry[]): Promise<void> {
  await updateClientsFile(
    ctx.clientsFile,
    (current, write) =>
      inTransaction(ctx.db, async (trx) => {
        await lockRegistry(trx);
        const { verdict, head } = await judge(trx, current);
        if (verdict.kind === 'absent' || verdict.kind === 'older' || verdict.kind === 'diverging') {
          throw conflict(
            `${refusalMessage(ctx.clientsFile, fileState(current), verdict, head)}; nothing was changed: run this command where the current clients file is, or copy it here first`,
          );
        }
        const entries = change(current.entries);
        const revision = (verdict.kind === 'apply' ? verdict.revision : (head?.revision ?? 0)) + 1;
        await replaceAllClients(trx, entries);
        await recordRevision(trx, {
          revision,
          content_hash: registryContentHash(entries),
          clients: entries.length,
          applied_by: appliedBy(`admin ${action}`, ctx.clientsFile),
        });
        // Last: a file that cannot be written rolls the database back with it.
        write(entries, revision);
      }),
    ctx.profile,
  );
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
  /** Where the browser may return after the application signs the user out (none by default). */
  postLogoutRedirectUris?: string[];
  scopes: string[];
  subjectType?: string;
  ipAllowList?: string[];
  /** Approving needs a second factor. */
  requireMfa?: boolean;
  /** For seeding: a given id; normally generated. */
  clientId?: string;
}

/** What registration takes beyond a standard client's fields: a fapi2 client's keys. */
export interface AddFapi2ClientInput extends AddClientInput {
  /** Its public keys, inline (a JWK Set). */
  jwks?: unknown;
  /** Where it publishes its public keys (https). */
  jwksUri?: string;
}

/** Registers a standard client; its secret is returned once (and stored only as an argon2id hash). */
export async function addClient(
  ctx: RegistryContext,
  input: AddClientInput,
): Promise<{ client_id: string; client_secret: string; environment: Environment }> {
  const secret = generateClientSecret();
  const entry = await register(ctx, input, { client_secret_hash: '$argon2id$placeholder' }, async (candidate) => ({
    ...candidate,
    client_secret_hash: await hashClientSecret(secret, ctx.passwordParams),
  }));
  return { client_id: entry.client_id, client_secret: secret, environment: entry.environment };
}

/** Registers a fapi2 client (docs/bank-data.md): its keys, no secret. */
export async function addFapi2Client(
  ctx: RegistryContext,
  input: AddFapi2ClientInput,
): Promise<{ client_id: string; environment: Environment; profile: 'fapi2' }> {
  const credentials: Partial<ClientEntryInput> = {
    profile: 'fapi2',
    ...(input.jwks !== undefined ? { jwks: input.jwks as ClientEntryInput['jwks'] } : {}),
    ...(input.jwksUri !== undefined ? { jwks_uri: input.jwksUri } : {}),
  };
  const entry = await register(ctx, input, credentials, async (candidate) => candidate);
  return { client_id: entry.client_id, environment: entry.environment, profile: 'fapi2' };
}

/** Validates the entry, completes its credentials (a hash costs time: only for a valid shape), and adds it as the next revision. */
async function register(
  ctx: RegistryContext,
  input: AddClientInput,
  credentials: Partial<ClientEntryInput>,
  complete: (candidate: ClientEntryInput) => Promise<ClientEntryInput>,
): Promise<ClientEntry> {
  if (input.environment !== 'production' && input.environment !== 'sandbox') throw invalid('environment: must be production or sandbox');
  const environment = input.environment;
  const candidate: ClientEntryInput = {
    environment,
    client_id: input.clientId ?? generateClientId(environment),
    ...credentials,
    name: input.name,
    ...(input.logoUri ? { logo_uri: input.logoUri } : {}),
    redirect_uris: input.redirectUris,
    post_logout_redirect_uris: input.postLogoutRedirectUris ?? [],
    scopes: input.scopes as ClientEntryInput['scopes'],
    subject_type: (input.subjectType ?? 'user') as 'user' | 'organization',
    ip_allow_list: input.ipAllowList ?? [],
    require_mfa: input.requireMfa ?? false,
  };
  const problem = describeProblems(candidate);
  if (problem) throw invalid(problem);
  const ruled = profileRuleProblems(clientEntrySchema.parse(candidate), ctx.profile ?? 'production')[0];
  if (ruled) throw invalid(`${ruled.path.join('.')}: ${ruled.message}`);
  const entry = clientEntrySchema.parse(await complete(candidate));
  await changeRegistry(ctx, 'clients add', (current) => {
    if (current.some((c) => c.client_id === entry.client_id)) throw conflict(`client_id ${entry.client_id} already exists`);
    return [...current, entry];
  });
  return entry;
}

/** Registers entries made ready elsewhere (their hashes already computed), in one revision: the benchmark's setup. */
export async function registerClientEntries(ctx: RegistryContext, entries: readonly ClientEntry[]): Promise<void> {
  await changeRegistry(ctx, 'clients add', (current) => {
    const taken = new Set(current.map((c) => c.client_id));
    const repeated = entries.find((e) => taken.has(e.client_id));
    if (repeated) throw conflict(`client_id ${repeated.client_id} already exists`);
    return [...current, ...entries];
  });
}

export async function rotateClientSecret(ctx: RegistryContext, clientId: string): Promise<{ client_id: string; client_secret: string }> {
  const secret = generateClientSecret();
  const hash = await hashClientSecret(secret, ctx.passwordParams);
  await changeRegistry(ctx, 'clients rotate-secret', (current) => {
    const client = current.find((c) => c.client_id === clientId);
    if (!client) throw notFound(`no client ${clientId}`);
    if (client.profile === 'fapi2')
      throw invalid(
        `client ${clientId} is a fapi2 client: it has no secret (it signs its client assertions with its own keys; change them in the clients file)`,
      );
    return current.map((c) => (c.client_id === clientId ? { ...c, client_secret_hash: hash } : c));
  });
  return { client_id: clientId, client_secret: secret };
}

export async function removeClient(ctx: RegistryContext, clientId: string): Promise<{ client_id: string }> {
  await changeRegistry(ctx, 'clients remove', (current) => {
    if (!current.some((c) => c.client_id === clientId)) throw notFound(`no client ${clientId}`);
    return current.filter((c) => c.client_id !== clientId);
  });
  return { client_id: clientId };
}

/** A client as the CLI lists it: the row without its secret hash, its keys (their ids only) and timestamps. */
export type ClientView = Omit<ClientRow, 'client_secret_hash' | 'created_at' | 'updated_at' | 'jwks' | 'jwks_uri'> & {
  jwks_uri?: string;
  key_ids?: string[];
};

export async function listRegisteredClients(db: Db, environment?: Environment): Promise<ClientView[]> {
  return (await listClients(db, environment)).map((row) => ({
    client_id: row.client_id,
    environment: row.environment,
    name: row.name,
    logo_uri: row.logo_uri,
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    scopes: row.scopes,
    subject_type: row.subject_type,
    ip_allow_list: row.ip_allow_list,
    require_mfa: row.require_mfa,
    profile: row.profile,
    ...(row.jwks_uri ? { jwks_uri: row.jwks_uri } : {}),
    ...(row.jwks ? { key_ids: row.jwks.keys.map((k, i) => (typeof k.kid === 'string' ? k.kid : `#${i + 1}`)) } : {}),
  }));
}

/** Where a valid file stands against the registry in the database. */
export interface RegistryComparison {
  standing: RegistryStanding;
  /** The revision the file declares. */
  fileRevision: number | undefined;
  /** The database's current revision, when one is recorded. */
  head: RegistryHead | undefined;
  /** Why a running server would not apply the file (older or diverging). */
  refusal?: string;
}

export type FileValidation = { valid: true; count: number; snapshot: ClientsSnapshot } | { valid: false; problems: string[] };

/** Validates the file; returns its problems (every one, each with its line and column). */
export function validateClientsFile(file: string, profile: Profile = 'production'): FileValidation {
  try {
    const snapshot = readClientsFile(file, profile);
    return { valid: true, count: snapshot.entries.length, snapshot };
  } catch (error) {
    if (error instanceof ClientRegistryError) return { valid: false, problems: [...error.problems] };
    throw error;
  }
}

/** Whether the file is the registry's current revision, newer (a server applies it), or older or diverging (refused). */
export async function compareWithRegistry(db: Db, file: string, snapshot: ClientsSnapshot): Promise<RegistryComparison> {
  const { verdict, head } = await judge(db, snapshot);
  const comparison: RegistryComparison = { standing: standingOf(verdict), fileRevision: snapshot.revision, head };
  if (verdict.kind === 'absent' || verdict.kind === 'older' || verdict.kind === 'diverging')
    comparison.refusal = refusalMessage(file, fileState(snapshot), verdict, head);
  return comparison;
}
