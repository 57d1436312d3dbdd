import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encryption at rest for the secrets the server must be able to read back (signing keys,
 * cookie and CSRF keys, webhook signing secrets): AES-256-GCM under a master key that is
 * never in the database, so a copy of the database yields none of them.
 */
const PREFIX = 'enc:v1:';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Values written before encryption existed are returned as they are (and re-sealed by their owner). */
  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(
        'a stored secret cannot be decrypted: the secrets key (ALMONER_SECRETS_KEY or <data_dir>/secrets.key) is not the one it was sealed with',
      );
    }
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }
}

export function decodeSecretsKey(value: string): Buffer {
  const key = Buffer.from(value, /^[A-Za-z0-9_-]+$/.test(value) ? 'base64url' : 'base64');
  if (key.length !== 32) throw new Error('ALMONER_SECRETS_KEY must be 32 bytes, base64 or base64url encoded');
  return key;
}

/**
 * The master key: `secrets_key` when configured (what several processes must share), else
 * a key file created once in the data directory (mode 0600), which suits one process.
 */
export function loadSecretBox(config: { secrets_key?: string; data_dir: string }): SecretBox {
  if (config.secrets_key) return new SecretBox(decodeSecretsKey(config.secrets_key));
  const file = path.resolve(config.data_dir, 'secrets.key');
  try {
    return new SecretBox(decodeSecretsKey(fs.readFileSync(file, 'utf8').trim()));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // created concurrently
  }
  return new SecretBox(decodeSecretsKey(fs.readFileSync(file, 'utf8').trim()));
}
