import fs from 'node:fs';
import path from 'node:path';
import { DomainError } from '../../errors/domain-error.js';
import { UsageError } from './command.js';

/**
 * The key files of `clients add --profile fapi2` (docs/bank-data.md, "Registering a bank-data
 * client"): `--jwks-file` reads the client's public keys, `--generate-keys` makes a key pair and
 * writes its private half for the client. Both paths are resolved from the directory the
 * command was run from (config/invocation-directory.ts), and every failure names the path tried.
 */

/** A JWK Set from a file; the registration's rules then judge each key. */
export function readJwksFile(cwd: string, file: string): unknown {
  const where = path.resolve(cwd, file);
  let text: string;
  try {
    text = fs.readFileSync(where, 'utf8');
  } catch (error) {
    throw new UsageError(`--jwks-file ${file}: cannot read ${where} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--jwks-file ${file}: ${where} is not JSON (a JWK Set {"keys": [...]} is expected)`);
  }
}

export interface GeneratedKeys {
  /** Where the private key was written (absolute). */
  file: string;
  kid: string;
  /** The public JWK Set to register. */
  jwks: { keys: Record<string, unknown>[] };
  /** Removes the file again (the registration failed: a key nobody registered is of no use). */
  discard(): void;
}

/**
 * Makes an ES256 key pair (EC P-256; `kid` its RFC 7638 thumbprint) and writes the private key,
 * as a JWK Set, to a new file readable by its owner only (0600). An existing file is never
 * overwritten: it may hold another client's key.
 */
export async function generateKeysFile(cwd: string, file: string): Promise<GeneratedKeys> {
  const { calculateJwkThumbprint, exportJWK, generateKeyPair } = await import('jose');
  const where = path.resolve(cwd, file);
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  const publicKey = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' };
  const text = `${JSON.stringify({ keys: [{ ...publicKey, d: jwk.d }] }, null, 2)}\n`;
  try {
    fs.writeFileSync(where, text, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new DomainError(
        'conflict',
        `--generate-keys ${file}: ${where} exists already (a key file is never overwritten: name a new one)`,
      );
    throw new DomainError('invalid', `--generate-keys ${file}: cannot write ${where} (${code ?? String(error)})`);
  }
  return { file: where, kid, jwks: { keys: [publicKey] }, discard: () => fs.rmSync(where, { force: true }) };
}
