import crypto, { type webcrypto } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';

/**
 * A DPoP proof made by hand (RFC 9449 4.2), so a test can get each claim wrong on purpose;
 * `overrides` replace claims (undefined removes one), `header` adds to the protected header.
 */
export async function dpopProof(
  key: webcrypto.CryptoKeyPair,
  request: { method: string; url: string; accessToken?: string },
  overrides: Record<string, unknown> = {},
  header: { alg?: string; typ?: string } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {
    htm: request.method,
    htu: request.url,
    iat: Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    ...(request.accessToken ? { ath: crypto.createHash('sha256').update(request.accessToken).digest('base64url') } : {}),
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  const jwk = await exportJWK(key.publicKey);
  return new SignJWT(claims).setProtectedHeader({ alg: header.alg ?? 'ES256', typ: header.typ ?? 'dpop+jwt', jwk }).sign(key.privateKey);
}
