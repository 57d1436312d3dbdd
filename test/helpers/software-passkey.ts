import crypto from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { Db } from '../../src/db/database.js';

/**
 * A passkey made in software for the HTTP-level tests: a P-256 key whose answers are built as
 * an authenticator builds them (WebAuthn Level 2, section 6.1: RP ID hash, flags, signature
 * count; the signature over authenticatorData and the SHA-256 of clientDataJSON). The Chromium
 * tests use the browser's own virtual authenticator instead.
 */
const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest();

export class SoftwarePasskey {
  readonly id = crypto.randomBytes(16).toString('base64url');
  private readonly keys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  private count = 0;

  constructor(readonly origin: string) {}

  /** The public key as COSE (RFC 9052 section 7): the form the server stores. */
  publicKey(): Buffer {
    const jwk = this.keys.publicKey.export({ format: 'jwk' });
    const key = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]);
    return Buffer.from(isoCBOR.encode(key));
  }

  /** Arranges what registering it on the Security page leaves: the user's passkey row. */
  async storeFor(db: Db, userId: string, name = 'Software key'): Promise<void> {
    await db
      .insertInto('webauthn_credentials')
      .values({
        id: this.id,
        user_id: userId,
        public_key: this.publicKey(),
        device_type: 'singleDevice',
        backed_up: false,
        name,
        rp_id: new URL(this.origin).hostname,
      })
      .execute();
  }

  /**
   * The browser's answer to a registration (RegistrationResponseJSON, as the Security page's
   * `response` field) for `challenge`: "none" attestation (WebAuthn Level 2, section 8.7), user
   * present and verified, the credential's id and COSE public key in the authenticator data.
   */
  registration(challenge: string): string {
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin: this.origin, crossOrigin: false }));
    const id = Buffer.from(this.id, 'base64url');
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      sha256(new URL(this.origin).hostname),
      Buffer.from([0x45]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLength,
      id,
      this.publicKey(),
    ]);
    const attestationObject = Buffer.from(
      isoCBOR.encode(
        new Map<string, unknown>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', new Uint8Array(authData)],
        ]) as never,
      ),
    );
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
    });
  }

  /** The answer (AuthenticationResponseJSON, as the form's `response` field) to `challenge`, with the next signature count. */
  answer(challenge: string, options: { userVerified?: boolean; origin?: string } = {}): string {
    this.count += 1;
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge, origin: options.origin ?? this.origin, crossOrigin: false }),
    );
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.count);
    const flags = 0x01 | (options.userVerified === false ? 0 : 0x04);
    const authenticatorData = Buffer.concat([sha256(new URL(this.origin).hostname), Buffer.from([flags]), counter]);
    const signature = crypto.sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.keys.privateKey);
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
      },
    });
  }
}
