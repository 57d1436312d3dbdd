import jsqr from 'jsqr';
import { generateSync } from 'otplib';
import { PNG } from 'pngjs';
import type { Db } from '../../src/db/database.js';
import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode } from '../../src/mfa/recovery-codes.js';
import { replaceRecoveryCodes } from '../../src/mfa/repository.js';

/**
 * The test users' phones: the authenticator-app secret each user set up (read off the setup
 * page, as a person scans it) and the recovery codes they were shown. A code is made for the
 * next time step the server has not seen from this user (a step works once, and no earlier
 * one after it), and when the window of accepted steps is used up, a recovery code is spent
 * instead of waiting for the clock.
 */
interface Phone {
  secret: string;
  lastStep: number;
  recoveryCodes: string[];
}

const phones = new Map<string, Phone>();
const PERIOD = 30;
const currentStep = () => Math.floor(Date.now() / 1000 / PERIOD);

export function totpCode(secret: string, step: number): string {
  return generateSync({ secret, epoch: step * PERIOD });
}

/** The setup page's key (the text under "Enter the key by hand"). */
export function secretOnPage(html: string): string {
  const match = /<p class="secret"><code>([A-Z2-7]+)<\/code>/.exec(html);
  if (!match) throw new Error(`no authenticator key on the page: ${html.slice(0, 300)}`);
  return match[1]!;
}

/** What a phone reads off a picture of a QR code (a PNG, e.g. a screenshot of the setup page's code). */
export function scanQrCode(png: Buffer): string {
  const image = PNG.sync.read(png);
  const found = jsqr.default(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height);
  if (!found) throw new Error(`no QR code found in the ${image.width}x${image.height} picture`);
  return found.data;
}

/** The recovery codes on the page shown once after setup. */
export function recoveryCodesOnPage(html: string): string[] {
  return [...html.matchAll(/<li><code>([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})<\/code><\/li>/g)].map((m) => m[1]!);
}

/** The code that finishes setting up `secret` for `email` (remembered for later sign-ins). */
export function setupCode(email: string, secret: string): string {
  const step = currentStep();
  phones.set(email.toLowerCase(), { secret, lastStep: step, recoveryCodes: [] });
  return totpCode(secret, step);
}

export function rememberRecoveryCodes(email: string, codes: string[]): void {
  const phone = phones.get(email.toLowerCase());
  if (phone) phone.recoveryCodes = [...codes];
}

/**
 * A code the server will take from `email` now: the app's next unused step, else a recovery
 * code, else (all spent) the app's code once the clock reaches the next step.
 */
export async function nextCode(email: string, db?: Db): Promise<string> {
  const phone = phones.get(email.toLowerCase());
  if (!phone) throw new Error(`${email} has no authenticator app set up in this test`);
  let step = Math.max(currentStep() - 1, phone.lastStep + 1);
  if (step > currentStep() + 1) {
    if (phone.recoveryCodes.length === 0 && db) phone.recoveryCodes = await freshRecoveryCodes(db, email);
    const code = phone.recoveryCodes.shift();
    if (code) return code;
    await new Promise((resolve) => setTimeout(resolve, (step - 1) * PERIOD * 1000 - Date.now() + 50));
    step = Math.max(currentStep() - 1, phone.lastStep + 1);
  }
  phone.lastStep = step;
  return totpCode(phone.secret, step);
}

/**
 * A new set of recovery codes for `email`, as the Security page's "Make new codes" would make
 * (written straight to the table: tests that sign one user in many times in a row would
 * otherwise wait for the clock).
 */
async function freshRecoveryCodes(db: Db, email: string): Promise<string[]> {
  const user = await db.selectFrom('users').select('id').where('email', '=', email.toLowerCase()).executeTakeFirstOrThrow();
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(
    db,
    user.id,
    codes.map((c) => hashRecoveryCode(normaliseRecoveryCode(c)!)),
  );
  return codes;
}
