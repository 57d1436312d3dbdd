import { generateSecret, generateURI, verifySync } from 'otplib';
import qrcode from 'qrcode-generator';

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

/** Light modules around the code; the page's white frame around the image adds to this quiet zone. */
const QR_MARGIN = 1;

/**
 * The QR code of `uri` as an SVG data: URL for an <img>, made on the server: no script and no
 * third party see the secret (the pages' CSP allows data: images only). qrcode-generator
 * encodes (an otpauth URI is ASCII: its label and issuer are percent-encoded); the SVG is one
 * path with a rectangle per run of dark modules in a row.
 */
export function qrSvg(uri: string): string {
  const code = qrcode(0, 'M');
  code.addData(uri, 'Byte');
  code.make();
  const count = code.getModuleCount();
  const size = count + 2 * QR_MARGIN;
  const runs: string[] = [];
  for (let row = 0; row < count; row++) {
    let col = 0;
    while (col < count) {
      if (!code.isDark(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < count && code.isDark(row, col)) col++;
      runs.push(`M${start + QR_MARGIN} ${row + QR_MARGIN}h${col - start}v1h-${col - start}z`);
    }
  }
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" shape-rendering="crispEdges">` +
    `<rect width="${size}" height="${size}" fill="#fff"/><path d="${runs.join('')}" fill="#000"/></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** The time step `code` was made for (within ±1 step of now), or undefined when it matches none. */
export function matchingTimeStep(secret: string, code: string): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const result = verifySync({ secret, token: code, epochTolerance: TOLERANCE_SECONDS });
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}
