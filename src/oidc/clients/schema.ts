import { z } from 'zod';
import { isCidrOrAddress } from '../../config/schema.js';
import { SCOPES } from '../../accounts/scopes.js';
import { redirectUriProblem, MAX_REDIRECT_URIS } from './redirect-uris.js';

/** One entry of config/clients.json (PRODUCT.md section 3). */
export const clientEntrySchema = z
  .object({
    environment: z.enum(['production', 'sandbox']),
    client_id: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 characters of A-Z a-z 0-9 _ -'),
    client_secret_hash: z.string().regex(/^\$argon2id\$/, 'must be an argon2id hash (use `admin clients add` or `rotate-secret`)'),
    name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    logo_uri: z
      .string()
      .max(2048)
      .refine((v) => {
        try {
          return new URL(v).protocol === 'https:';
        } catch {
          return false;
        }
      }, 'must be an https URL')
      .optional(),
    redirect_uris: z.array(z.string()).min(1, 'at least one redirect URI is required').max(MAX_REDIRECT_URIS, `at most ${MAX_REDIRECT_URIS} redirect URIs per client`),
    scopes: z
      .array(z.enum(SCOPES, { message: `each scope must be one of ${SCOPES.join(', ')}` }))
      .min(1, 'at least one scope is required')
      .refine((s) => new Set(s).size === s.length, 'must not repeat a scope'),
    subject_type: z.enum(['user', 'organization']).default('user'),
    ip_allow_list: z.array(z.string().refine(isCidrOrAddress, 'each entry must be an IPv4 or IPv6 address or CIDR range')).default([]),
  })
  .strict()
  .superRefine((entry, ctx) => {
    entry.redirect_uris.forEach((uri, index) => {
      const problem = redirectUriProblem(uri, entry.environment);
      if (problem) ctx.addIssue({ code: 'custom', path: ['redirect_uris', index], message: `${uri} ${problem}` });
    });
    if (entry.subject_type === 'organization' && entry.scopes.includes('openid')) {
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'an organization-subject client cannot register openid (it never gets an id_token)' });
    }
  });

export type ClientEntry = z.output<typeof clientEntrySchema>;
export type ClientEntryInput = z.input<typeof clientEntrySchema>;

export const clientsFileSchema = z.object({ clients: z.array(z.unknown()) }).strict();

export class ClientRegistryError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'ClientRegistryError';
  }
}

/** Validates a whole clients file; every problem names the client, the field and the rule. */
/** `source`: the file's full path, which starts every problem. */
export function parseClientsDocument(document: unknown, source: string): ClientEntry[] {
  const shape = clientsFileSchema.safeParse(document);
  if (!shape.success) throw new ClientRegistryError([`${source}: must be an object {"clients": [...]}`]);
  const problems: string[] = [];
  const entries: ClientEntry[] = [];
  const seen = new Set<string>();
  shape.data.clients.forEach((raw, index) => {
    const id = (raw as { client_id?: unknown })?.client_id;
    const label = typeof id === 'string' && id ? `client ${id}` : `client #${index + 1}`;
    const parsed = clientEntrySchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.map(String).join('.') || '(entry)';
        const rule = issue.code === 'unrecognized_keys' ? 'is not a known field' : issue.message;
        problems.push(`${source}: ${label}: ${field}: ${rule}`);
      }
      return;
    }
    if (seen.has(parsed.data.client_id)) problems.push(`${source}: ${label}: client_id: must be unique`);
    seen.add(parsed.data.client_id);
    entries.push(parsed.data);
  });
  if (problems.length > 0) throw new ClientRegistryError(problems);
  return entries;
}
