import crypto from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` + base64 of 24 to 64 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export function isValidSigningSecret(value: string): boolean {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!match) return false;
  const bytes = Buffer.from(match[1]!, 'base64');
  return bytes.length >= 24 && bytes.length <= 64 && bytes.toString('base64') === match[1];
}
