import { describe, expect, it } from 'vitest';
import { passkeyName, relyingParty } from '../../src/mfa/passkeys.js';

describe('passkey relying party and names', () => {
  it('takes the dashboard host as the RP ID, and none for an IP address (WebAuthn needs a domain name)', () => {
    expect(relyingParty({ origin: 'https://dashboard.example.org' })).toEqual({
      id: 'dashboard.example.org',
      origin: 'https://dashboard.example.org',
    });
    expect(relyingParty({ origin: 'http://localhost:3002' })).toEqual({ id: 'localhost', origin: 'http://localhost:3002' });
    expect(relyingParty({ origin: 'http://127.0.0.1:3002' })).toBeUndefined();
    expect(relyingParty({ origin: 'http://[::1]:3002' })).toBeUndefined();
    // passkey_rp_id: both dashboards share one RP ID, each keeps its own origin.
    expect(relyingParty({ origin: 'https://sandbox.dashboard.example.org', passkeyRpId: 'example.org' })).toEqual({
      id: 'example.org',
      origin: 'https://sandbox.dashboard.example.org',
    });
  });

  it('trims a name and refuses an empty or over-long one', () => {
    expect(passkeyName('  Work   laptop ')).toBe('Work laptop');
    expect(() => passkeyName('   ')).toThrow(/1 to 100 characters/);
    expect(() => passkeyName('x'.repeat(101))).toThrow(/1 to 100 characters/);
    expect(passkeyName('x'.repeat(100))).toHaveLength(100);
  });
});
