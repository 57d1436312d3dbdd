import { generateSecret, generateURI, verifySync } from 'otplib';
import QRCode from 'qrcode';

/**
 * RFC 6238 codes as every authenticator app makes them (SHA-1, 6 digits, 30-second steps):
 * the pure part of TOTP. Storage, replay and attempt limits are in second-factors.ts.
 */

/** A code of the step before or after the server's clock is accepted too (clock drift). */
const TOLERANCE_SECONDS = 30;

/** A new 160-bit secret, base32 as the apps expect. */
export function newTotpSecret(): string {
  return generateSecret();
}

/** The otpauth:// URI an app scans: issuer "Almoner" (and the environment), the user's address. */
export function totpUri(secret: string, email: string, issuer: string): string {
  return generateURI({ issuer, label: email, secret });
}

/**
 * The QR code of `uri` as an SVG data: URL for an <img>, made on the server: no script and no
 * third party see the secret (the pages' CSP allows data: images only).
 */
export async function qrSvg(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** The time step `code` was made for (within ±1 step of now), or undefined when it matches none. */
export function matchingTimeStep(secret: string, code: string): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = verifySync({ secret, token: code, epochTolerance: TOLERANCE_SECONDS });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}
