import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { rotateServerKeys, SERVER_KEY_ACTIVATION_SECONDS, ServerKeys } from '../../src/keys/server-keys.js';
import { MAX_UPLOAD_URL_SECONDS, UploadSigner } from '../../src/storage/upload-signing.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** The folder storage's signed upload URLs (docs/gift-processing.md, "The upload route (folder storage)"). */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());
afterEach(() => {
  vi.useRealTimers();
});

const ORIGINS = { production: 'https://api.example.org', sandbox: 'https://sandbox.api.example.org' };
const BATCH = 'batch_01jzzzzzzzzzzzzzzzzzzzzzzz';

function parts(url: string) {
  const parsed = new URL(url);
  return { parsed, expires: parsed.searchParams.get('expires'), signature: parsed.searchParams.get('signature') };
}

describe('UploadSigner', () => {
  it("signs a batch's PUT on its environment's API host, and verifies it until its expiry", async () => {
    const signer = new UploadSigner(await ServerKeys.load(t.db, testBox), ORIGINS);
    const expiresAt = new Date(Date.now() + 900_000);
    const { parsed, expires, signature } = parts(signer.sign(`batches/${BATCH}.zip`, expiresAt, 'sandbox'));
    expect(parsed.origin).toBe(ORIGINS.sandbox);
    expect(parsed.pathname).toBe(`/v1/mailbox/uploads/${BATCH}`);
    expect(Number(expires)).toBe(Math.ceil(expiresAt.getTime() / 1000));
    expect(signer.verify('PUT', parsed.pathname, expires, signature)).toEqual({ ok: true });
    expect(signer.verify('PUT', parsed.pathname, expires, signature, Number(expires) * 1000)).toEqual({ ok: false, reason: 'expired' });
    // Another method, path or expiry, or no signature at all, is not what was signed.
    expect(signer.verify('POST', parsed.pathname, expires, signature)).toEqual({ ok: false, reason: 'signature' });
    expect(signer.verify('PUT', `${parsed.pathname}x`, expires, signature)).toEqual({ ok: false, reason: 'signature' });
    expect(signer.verify('PUT', parsed.pathname, String(Number(expires) + 1), signature)).toEqual({ ok: false, reason: 'signature' });
    expect(signer.verify('PUT', parsed.pathname, expires, undefined)).toEqual({ ok: false, reason: 'signature' });
    expect(signer.verify('PUT', parsed.pathname, ['1', '2'], signature)).toEqual({ ok: false, reason: 'signature' });
    expect(parts(signer.sign(`batches/${BATCH}.zip`, expiresAt, 'production')).parsed.origin).toBe(ORIGINS.production);
  });

  it('makes URLs for batch keys only, and for an hour at most', async () => {
    const signer = new UploadSigner(await ServerKeys.load(t.db, testBox), ORIGINS);
    const soon = new Date(Date.now() + 60_000);
    for (const key of ['scans/x.tif', `batches/${BATCH}.tar`, `batches/../${BATCH}.zip`]) {
      expect(() => signer.sign(key, soon, 'sandbox'), key).toThrow(/batch keys/);
    }
    expect(() => signer.sign(`batches/${BATCH}.zip`, new Date(Date.now() + (MAX_UPLOAD_URL_SECONDS + 5) * 1000), 'sandbox')).toThrow(
      /at most/,
    );
  });

  it('keeps verifying a URL signed before a key rotation, in every process', async () => {
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const keys = await ServerKeys.load(t.db, testBox);
    const signer = new UploadSigner(keys, ORIGINS);
    const { parsed, expires, signature } = parts(signer.sign(`batches/${BATCH}.zip`, new Date(start + 900_000), 'sandbox'));
    await rotateServerKeys(t.db, testBox);
    await keys.refresh();
    vi.setSystemTime(start + SERVER_KEY_ACTIVATION_SECONDS * 1000 + 1000);
    // The new version signs now; the one before still verifies what it signed.
    const after = parts(signer.sign(`batches/${BATCH}.zip`, new Date(start + 900_000), 'sandbox'));
    expect(after.signature).not.toBe(signature);
    expect(signer.verify('PUT', parsed.pathname, expires, signature)).toEqual({ ok: true });
    // Another process that loads the keys after the rotation verifies it too.
    const other = new UploadSigner(await ServerKeys.load(t.db, testBox), ORIGINS);
    expect(other.verify('PUT', parsed.pathname, expires, signature)).toEqual({ ok: true });
    expect(other.verify('PUT', parsed.pathname, after.expires, after.signature)).toEqual({ ok: true });
  });
});
