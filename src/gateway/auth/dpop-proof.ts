import crypto from 'node:crypto';
import type { Middleware, ParameterizedContext } from 'koa';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import {
  CLOCK_TOLERANCE_SECONDS,
  FAPI_SIGNING_ALGS,
  isFreshIat,
  isPublicSigningJwk,
  jwkThumbprint,
  MAX_PROOF_AGE_SECONDS,
  PROOF_IAT_RULE,
} from '../../authorizations/fapi-profile.js';
import type { Db } from '../../db/database.js';
import { DomainError } from '../../errors/domain-error.js';
import { headerCount } from '../../http/repeated-header.js';
import { claimMark } from '../../limits/replay-marks-repository.js';
import { environmentOf } from '../routing/environment.js';
import { wrongEnvironmentDetail } from './wrong-environment.js';

/** A 401 with the DPoP challenge of RFC 9449 7.1 (its error, and the algorithms a proof may use). */
function dpopRefusal(error: 'invalid_token' | 'invalid_dpop_proof', detail: string): DomainError {
  const challenge = `DPoP algs="${FAPI_SIGNING_ALGS.join(' ')}", error="${error}", error_description="${detail.replace(/["\\]/g, '')}"`;
  return new DomainError('unauthenticated', detail, { headers: { 'WWW-Authenticate': challenge } });
}

const invalidProof = (detail: string) => dpopRefusal('invalid_dpop_proof', detail);

/** The URL a proof must name: this host's configured public origin and the request's path, without query (RFC 9449 4.3). */
function expectedHtu(ctx: ParameterizedContext): string {
  return new URL(ctx.path, ctx.state.publicOrigin).href;
}

function sameHtu(claimed: unknown, expected: string): boolean {
  if (typeof claimed !== 'string' || !URL.canParse(claimed)) return false;
  const url = new URL(claimed);
  url.search = '';
  url.hash = '';
  return url.href === expected;
}

/**
 * Verifies the proof's signature, type, algorithm and claims against this request; returns its
 * payload and key thumbprint. Exported for the benchmark, which times it alone (docs/benchmarks.md).
 */
export async function verifyProof(
  ctx: ParameterizedContext,
  proof: string,
  token: string,
): Promise<{ payload: JWTPayload; thumbprint: string }> {
  let verified;
  let embedded: EmbeddedKey | undefined;
  try {
    embedded = await embeddedKey(decodeProtectedHeader(proof).jwk);
    if (embedded) verified = await jwtVerify(proof, embedded.key, { typ: 'dpop+jwt', algorithms: [...FAPI_SIGNING_ALGS] });
  } catch {
    verified = undefined;
  }
  if (!verified || !embedded)
    throw invalidProof(
      `The DPoP proof is not a valid dpop+jwt signed with its embedded public key (${FAPI_SIGNING_ALGS.join(', ').replace(/, (?=[^,]*$)/, ' or ')}).`,
    );
  const { payload } = verified;
  if (!isFreshIat(payload.iat)) throw invalidProof(`The DPoP proof was not made just now: ${PROOF_IAT_RULE}.`);
  if (typeof payload.jti !== 'string' || payload.jti.length < 8 || payload.jti.length > 256)
    throw invalidProof('The DPoP proof needs a jti of 8 to 256 characters.');
  if (payload.htm !== ctx.method) throw invalidProof(`The DPoP proof was made for another method (htm must be ${ctx.method}).`);
  if (!sameHtu(payload.htu, expectedHtu(ctx)))
    throw invalidProof('The DPoP proof was made for another URL (htu must be this URL, without query).');
  if (payload.ath !== crypto.createHash('sha256').update(token).digest('base64url'))
    throw invalidProof('The DPoP proof was made for another access token (ath).');
  return { payload, thumbprint: embedded.thumbprint };
}

interface EmbeddedKey {
  key: crypto.KeyObject;
  /** RFC 7638: SHA-256 of the key's required members, in order. */
  thumbprint: string;
}

const KEY_CACHE_MAX = 10_000;
const KEY_MEMBERS: ReadonlySet<string> = new Set(['kty', 'crv', 'x', 'y', 'e', 'n']);
/**
 * Imported keys by thumbprint: a client proves with the same key on every call, and importing
 * it from the header each time cost most of a check (docs/benchmarks.md, "DPoP beside Bearer").
 * The thumbprint covers every member that defines the public key, so one entry is one key.
 */
const imported = new Map<string, crypto.KeyObject>();

/** The proof header's public key, imported (once per key) with its thumbprint; undefined when it is not one. */
async function embeddedKey(jwk: unknown): Promise<EmbeddedKey | undefined> {
  if (!isPublicSigningJwk(jwk)) return undefined;
  const thumbprint = await jwkThumbprint(jwk);
  let key = imported.get(thumbprint);
  if (!key) {
    // Only the members that define the public key are imported.
    const members = Object.fromEntries(Object.entries(jwk).filter(([name]) => KEY_MEMBERS.has(name)));
    key = crypto.createPublicKey({ key: members as crypto.JsonWebKey, format: 'jwk' });
    if (imported.size >= KEY_CACHE_MAX) imported.clear();
    imported.set(thumbprint, key);
  }
  return { key, thumbprint };
}

/**
 * Sender-constrained access tokens (RFC 9449; docs/bank-data.md, "Calling the API"): a token
 * bound to a DPoP key is accepted only as `Authorization: DPoP <token>` with one `DPoP` proof
 * signed by that key, made for this method, URL and token, just now, and never seen before:
 * its jti is claimed in replay_marks by one insert, so of two processes shown the same proof
 * only one accepts it. A token that is not bound keeps the Bearer scheme. Runs after the
 * credential is loaded and before it is judged, so a stolen bound token learns nothing.
 */
export function dpopProof(db: Db): Middleware {
  return async (ctx, next) => {
    const credential = ctx.state.credential;
    const jkt = credential?.kind === 'access_token' || credential?.kind === 'client_credentials' ? credential.row?.payload.jkt : undefined;
    if (!jkt) {
      if (ctx.state.scheme === 'DPoP') {
        // No row at all (never issued, expired and swept, or revoked): the token is what is wrong, not its scheme.
        if ((credential?.kind === 'access_token' || credential?.kind === 'client_credentials') && !credential.row)
          throw dpopRefusal(
            'invalid_token',
            (await wrongEnvironmentDetail(db, environmentOf(ctx), 'access_token', ctx.state.bearer!)) ??
              'The access token is invalid, expired or revoked.',
          );
        throw dpopRefusal('invalid_token', 'This credential is not bound to a DPoP key: send it as Authorization: Bearer.');
      }
      return next();
    }
    if (ctx.state.scheme !== 'DPoP')
      throw dpopRefusal('invalid_token', 'This access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof.');
    if (headerCount(ctx.req, 'dpop') !== 1) throw invalidProof('Send exactly one DPoP header with a proof for this request.');
    const { payload, thumbprint } = await verifyProof(ctx, ctx.get('dpop'), ctx.state.bearer!);
    if (thumbprint !== jkt) throw invalidProof('The DPoP proof is signed with another key than the one the access token is bound to.');
    const key = crypto.createHash('sha256').update(`${jkt}\0${payload.jti}`).digest('base64url');
    // Kept until no clock could call the proof fresh any more.
    const expiresAt = new Date((payload.iat! + MAX_PROOF_AGE_SECONDS + CLOCK_TOLERANCE_SECONDS) * 1000);
    if (!(await claimMark(db, environmentOf(ctx), 'dpop', key, expiresAt)))
      throw invalidProof('This DPoP proof was already used: make a new proof for every request.');
    await next();
  };
}
