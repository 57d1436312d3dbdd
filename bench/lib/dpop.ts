import crypto, { type KeyObject } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { calculateJwkThumbprint, exportJWK, SignJWT, type JWK } from 'jose';
import { verifyProof } from '../../src/gateway/auth/dpop-proof.js';
import { percentile, round, type Measurement } from './load.js';

/**
 * What a bank-data (fapi2) client signs, made by the harness the way a client makes it:
 * DPoP proofs (RFC 9449 4.2: typ dpop+jwt, the public key in the header; htm, htu, iat, a
 * unique jti, and ath at the resource server) and private_key_jwt client assertions (RFC 7523:
 * aud the issuer, a unique jti, 60 s of life). Each is made before the run that presents it,
 * once per request, never reused.
 */

export type BenchAlg = 'ES256' | 'PS256' | 'EdDSA';

export interface BenchKey {
  alg: BenchAlg;
  privateKey: KeyObject;
  publicJwk: JWK;
  /** RFC 7638 thumbprint of the public key: the jkt a bound token names. */
  thumbprint: string;
}

export async function benchKey(alg: BenchAlg): Promise<BenchKey> {
  const pair =
    alg === 'ES256'
      ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'PS256'
        ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
        : crypto.generateKeyPairSync('ed25519');
  const publicJwk = await exportJWK(pair.publicKey);
  return { alg, privateKey: pair.privateKey, publicJwk, thumbprint: await calculateJwkThumbprint(publicJwk) };
}

export const ath = (accessToken: string) => crypto.createHash('sha256').update(accessToken).digest('base64url');

export function dpopProof(key: BenchKey, request: { method: string; url: string; accessToken?: string }): Promise<string> {
  return new SignJWT({
    htm: request.method,
    htu: request.url,
    iat: Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    ...(request.accessToken ? { ath: ath(request.accessToken) } : {}),
  })
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.publicJwk })
    .sign(key.privateKey);
}

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export function clientAssertion(key: BenchKey, clientId: string, issuer: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: clientId, sub: clientId, aud: issuer, jti: crypto.randomUUID(), iat: now, exp: now + 60 })
    .setProtectedHeader({ alg: key.alg })
    .sign(key.privateKey);
}

/** `n` things made by `make`, 16 at a time (signing is the harness's CPU, spent before the run). */
export async function makeMany<T>(n: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const made = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(16, n) }, async () => {
      for (let i = next++; i < n; i = next++) made[i] = await make(i);
    }),
  );
  return made;
}

/** The proof check's cost: wall time per proof (one at a time) and this process's CPU time per proof (all its threads). */
export type ProofCheckMeasurement = Measurement & { usPerProof: number; cpuUsPerProof: number };

/** Times `check` over `items` one at a time (after `warm` of them untimed): wall per item (p50 / p99 in ms, mean in µs) and CPU per item (µs). */
async function timeEach<T>(items: readonly T[], warm: number, check: (item: T) => unknown): Promise<ProofCheckMeasurement> {
  for (const item of items.slice(0, warm)) await check(item);
  const timed = items.slice(warm);
  const each: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (const item of timed) {
    const t0 = performance.now();
    await check(item);
    each.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = each.sort((a, b) => a - b);
  return {
    rps: round(timed.length / seconds, 0),
    p50: round(percentile(sorted, 50), 4),
    p99: round(percentile(sorted, 99), 4),
    errors: 0,
    completed: timed.length,
    seconds: round(seconds, 2),
    concurrency: 1,
    usPerProof: round((seconds * 1e6) / timed.length, 1),
    cpuUsPerProof: round((cpu.user + cpu.system) / timed.length, 1),
  };
}

/** node:crypto's verify of a JWS signature, the key imported once: the signature math alone. */
function rawVerifier(key: BenchKey): (jws: string) => boolean {
  const publicKey = crypto.createPublicKey({ key: key.publicJwk as crypto.JsonWebKey, format: 'jwk' });
  return (jws) => {
    const last = jws.lastIndexOf('.');
    const input = Buffer.from(jws.slice(0, last));
    const signature = Buffer.from(jws.slice(last + 1), 'base64url');
    if (key.alg === 'EdDSA') return crypto.verify(null, input, publicKey, signature);
    if (key.alg === 'PS256')
      return crypto.verify('sha256', input, { key: publicKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, signature);
    return crypto.verify('sha256', input, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature);
  };
}

/**
 * The gateway's proof check itself, in this process: src/gateway/auth/dpop-proof.ts's
 * verifyProof (jose jwtVerify with the proof's cached key, the typ and algorithm, iat, jti, htm, htu and
 * ath, then the key's thumbprint) on `n` fresh proofs, one at a time, after `n / 10` of
 * warm-up. What the server does besides, the single insert in replay_marks, is left out.
 * The proofs are made first; only the checks are timed: wall time per proof and the CPU this
 * process spent per proof (on a shared machine the wall time includes waiting for a core, the
 * CPU time does not). Beside it, as its floor: node:crypto's verify of the same proofs'
 * signatures with the key imported once (`signature`).
 */
export async function measureProofCheck(
  alg: BenchAlg,
  n: number,
): Promise<{ check: ProofCheckMeasurement; signature: ProofCheckMeasurement }> {
  const key = await benchKey(alg);
  const origin = 'http://127.0.0.1:3001';
  const path = '/fdx/v6/accounts';
  const token = crypto.randomBytes(32).toString('base64url');
  const ctx = { method: 'GET', path, state: { publicOrigin: origin } } as unknown as ParameterizedContext;
  const warm = Math.max(100, Math.round(n / 10));
  const proofs = await makeMany(warm + n, () => dpopProof(key, { method: 'GET', url: `${origin}${path}`, accessToken: token }));
  const check = await timeEach(proofs, warm, async (proof) => {
    const { thumbprint } = await verifyProof(ctx, proof, token);
    if (thumbprint !== key.thumbprint) throw new Error('the proof check returned another key');
  });
  const verify = rawVerifier(key);
  const signature = await timeEach(proofs, warm, (proof) => {
    if (!verify(proof)) throw new Error('node:crypto refused a proof jose accepted');
  });
  return { check, signature };
}
