import { describe, expect, it } from 'vitest';
import {
  MAX_REDIRECT_URI_LENGTH,
  MAX_REDIRECT_URIS,
  redirectUriMatches,
  redirectUriProblem,
  redirectUrisProblem,
} from '../../src/oidc/clients/redirect-uris.js';

/** An https URI of exactly `length` characters with a path beyond "/". */
function uriOfLength(length: number): string {
  const prefix = 'https://app.example.org/cb/';
  return prefix + 'a'.repeat(length - prefix.length);
}

describe('redirect URI rules at registration (docs/oauth.md, Redirect URIs)', () => {
  it('accepts an https URI with a host and a path, in both environments', () => {
    for (const environment of ['production', 'sandbox'] as const) {
      expect(redirectUriProblem('https://app.example.org/callback', environment)).toBeUndefined();
      expect(redirectUriProblem('https://app.example.org/oauth/callback', environment)).toBeUndefined();
      expect(redirectUriProblem('https://app.example.org:8443/cb', environment)).toBeUndefined();
    }
  });

  it('rejects http in production, even on a loopback host', () => {
    for (const uri of ['http://app.example.org/cb', 'http://localhost/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]/cb']) {
      expect(redirectUriProblem(uri, 'production'), uri).toMatch(/must use https/);
    }
  });

  it('accepts http on loopback hosts in the sandbox only', () => {
    for (const uri of [
      'http://localhost/cb',
      'http://localhost:3000/callback',
      'http://127.0.0.1:8080/cb',
      'http://[::1]/cb',
      'http://[::1]:9000/cb',
    ]) {
      expect(redirectUriProblem(uri, 'sandbox'), uri).toBeUndefined();
    }
  });

  it('rejects http to a non-loopback host in the sandbox', () => {
    for (const uri of ['http://app.example.org/cb', 'http://192.168.1.10/cb', 'http://127.0.0.2/cb', 'http://localhost.example.org/cb']) {
      expect(redirectUriProblem(uri, 'sandbox'), uri).toMatch(/must use https/);
    }
  });

  it('rejects other schemes', () => {
    for (const uri of ['ftp://app.example.org/cb', 'com.example.app:/cb', 'javascript:alert(1)//cb']) {
      expect(redirectUriProblem(uri, 'production'), uri).toBeDefined();
      expect(redirectUriProblem(uri, 'sandbox'), uri).toBeDefined();
    }
  });

  it('rejects a URI without a path and one with the root path only', () => {
    expect(redirectUriProblem('https://app.example.org', 'production')).toMatch(/path beyond/);
    expect(redirectUriProblem('https://app.example.org/', 'production')).toMatch(/path beyond/);
    expect(redirectUriProblem('https://app.example.org:8443/', 'production')).toMatch(/path beyond/);
    expect(redirectUriProblem('http://127.0.0.1:8080', 'sandbox')).toMatch(/path beyond/);
    expect(redirectUriProblem('http://127.0.0.1:8080/', 'sandbox')).toMatch(/path beyond/);
  });

  it('rejects a query string, even an empty one', () => {
    expect(redirectUriProblem('https://app.example.org/cb?x=1', 'production')).toMatch(/query/);
    expect(redirectUriProblem('https://app.example.org/cb?', 'production')).toMatch(/query/);
    expect(redirectUriProblem('http://127.0.0.1:8080/cb?state=1', 'sandbox')).toMatch(/query/);
  });

  it('rejects a fragment, even an empty "#"', () => {
    expect(redirectUriProblem('https://app.example.org/cb#frag', 'production')).toMatch(/fragment/);
    expect(redirectUriProblem('https://app.example.org/cb#', 'production')).toMatch(/fragment/);
  });

  it('rejects user info', () => {
    expect(redirectUriProblem('https://user@app.example.org/cb', 'production')).toMatch(/user info/);
    expect(redirectUriProblem('https://user:pass@app.example.org/cb', 'production')).toMatch(/user info/);
    expect(redirectUriProblem('https://:pass@app.example.org/cb', 'production')).toMatch(/user info/);
    expect(redirectUriProblem('http://user@127.0.0.1:8080/cb', 'sandbox')).toMatch(/user info/);
  });

  it('accepts exactly 255 characters and rejects 256', () => {
    expect(MAX_REDIRECT_URI_LENGTH).toBe(255);
    const ok = uriOfLength(255);
    const tooLong = uriOfLength(256);
    expect(ok).toHaveLength(255);
    expect(tooLong).toHaveLength(256);
    expect(redirectUriProblem(ok, 'production')).toBeUndefined();
    expect(redirectUriProblem(tooLong, 'production')).toMatch(/at most 255/);
    expect(redirectUrisProblem([tooLong], 'production')).toMatch(/at most 255/);
  });

  it('rejects wildcards in the host or the path', () => {
    expect(redirectUriProblem('https://*.example.org/cb', 'production')).toMatch(/wildcard/);
    expect(redirectUriProblem('https://app.example.org/*', 'production')).toMatch(/wildcard/);
    expect(redirectUriProblem('https://app.example.org/cb/*', 'production')).toMatch(/wildcard/);
  });

  it('rejects something that is not an absolute URL', () => {
    expect(redirectUriProblem('/cb', 'production')).toBeDefined();
    expect(redirectUriProblem('app.example.org/cb', 'production')).toBeDefined();
    expect(redirectUriProblem('', 'production')).toBeDefined();
  });

  it('accepts 1 to 5 URIs per client and rejects 0 and 6', () => {
    expect(MAX_REDIRECT_URIS).toBe(5);
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://app.example.org/cb${i}`);
    expect(redirectUrisProblem(uris(1), 'production')).toBeUndefined();
    expect(redirectUrisProblem(uris(5), 'production')).toBeUndefined();
    expect(redirectUrisProblem(uris(6), 'production')).toMatch(/at most 5/);
    expect(redirectUrisProblem([], 'production')).toMatch(/at least one/);
  });

  it('names the offending URI when one of several breaks a rule', () => {
    const problem = redirectUrisProblem(['https://app.example.org/ok', 'https://app.example.org/cb?x=1'], 'production');
    expect(problem).toContain('https://app.example.org/cb?x=1');
    expect(problem).toMatch(/query/);
    expect(redirectUrisProblem(['https://app.example.org/ok', 'http://app.example.org/cb'], 'sandbox')).toMatch(/must use https/);
  });
});

describe('redirect URI matching at authorization', () => {
  const registered = ['https://app.example.org/cb'];

  it('matches the registered URI exactly', () => {
    expect(redirectUriMatches('https://app.example.org/cb', registered, 'production')).toBe(true);
  });

  it('compares scheme and host case-insensitively', () => {
    expect(redirectUriMatches('HTTPS://APP.Example.org/cb', registered, 'production')).toBe(true);
    expect(redirectUriMatches('https://App.Example.Org/cb', registered, 'production')).toBe(true);
    expect(redirectUriMatches('https://app.example.org/cb', ['HTTPS://APP.EXAMPLE.ORG/cb'], 'production')).toBe(true);
  });

  it('treats an explicit :443 as no port for https, both ways', () => {
    expect(redirectUriMatches('https://app.example.org:443/cb', registered, 'production')).toBe(true);
    expect(redirectUriMatches('https://app.example.org/cb', ['https://app.example.org:443/cb'], 'production')).toBe(true);
  });

  it('compares the path exactly (case, trailing slash, dot segments, encoding)', () => {
    expect(redirectUriMatches('https://app.example.org/CB', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/Cb', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb/', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb', ['https://app.example.org/cb/'], 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/x/../cb', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/%63b', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb/more', registered, 'production')).toBe(false);
  });

  it('rejects another port', () => {
    expect(redirectUriMatches('https://app.example.org:8443/cb', registered, 'production')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1:8081/cb', ['http://127.0.0.1:8080/cb'], 'sandbox')).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1/cb', ['http://127.0.0.1:8080/cb'], 'sandbox')).toBe(false);
  });

  it('rejects a query or a fragment appended to a registered URI', () => {
    expect(redirectUriMatches('https://app.example.org/cb?x=1', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb?', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb#x', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb#', registered, 'production')).toBe(false);
  });

  it('rejects user info in front of the registered host', () => {
    expect(redirectUriMatches('https://evil@app.example.org/cb', registered, 'production')).toBe(false);
  });

  it('rejects a URI that is not registered, another host, or another scheme', () => {
    expect(redirectUriMatches('https://app.example.org/other', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://evil.example.org/cb', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org.evil.example/cb', registered, 'production')).toBe(false);
    expect(redirectUriMatches('http://app.example.org/cb', registered, 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb', [], 'production')).toBe(false);
  });

  it('never treats a registered value as a pattern', () => {
    expect(redirectUriMatches('https://app.example.org/cb', ['https://*.example.org/cb'], 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/cb', ['https://app.example.org/*'], 'production')).toBe(false);
    expect(redirectUriMatches('https://*.example.org/cb', ['https://*.example.org/cb'], 'production')).toBe(false);
  });

  it('matches one of several registered URIs', () => {
    const several = ['https://app.example.org/a', 'https://app.example.org/b', 'https://other.example.org/c'];
    expect(redirectUriMatches('https://app.example.org/b', several, 'production')).toBe(true);
    expect(redirectUriMatches('https://other.example.org/c', several, 'production')).toBe(true);
    expect(redirectUriMatches('https://other.example.org/a', several, 'production')).toBe(false);
  });

  it('applies the environment: loopback http matches in the sandbox, never in production', () => {
    expect(redirectUriMatches('http://127.0.0.1:8080/cb', ['http://127.0.0.1:8080/cb'], 'sandbox')).toBe(true);
    expect(redirectUriMatches('http://LOCALHOST:8080/cb', ['http://localhost:8080/cb'], 'sandbox')).toBe(true);
    expect(redirectUriMatches('http://[::1]/cb', ['http://[::1]/cb'], 'sandbox')).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:8080/cb', ['http://127.0.0.1:8080/cb'], 'production')).toBe(false);
  });

  it('rejects a requested URI that breaks a registration rule even if a registered value equals it', () => {
    // A registration that slipped past validation must not make a bad URI usable.
    expect(redirectUriMatches('https://app.example.org/cb?x=1', ['https://app.example.org/cb?x=1'], 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org/', ['https://app.example.org/'], 'production')).toBe(false);
    expect(redirectUriMatches('https://u@app.example.org/cb', ['https://u@app.example.org/cb'], 'production')).toBe(false);
  });
});

describe('what the URI says and what the parser reads must agree', () => {
  it('a backslash, a scheme without "//" or a numeric host spelling is no way around exact matching', () => {
    expect(redirectUriMatches('https://app.example.org\\evil/cb', ['https://app.example.org/cb'], 'production')).toBe(false);
    expect(redirectUriMatches('https://app.example.org\\/cb', ['https://app.example.org/cb'], 'production')).toBe(false);
    expect(redirectUriMatches('https:app.example.org/evil', ['https:app.example.org/cb'], 'production')).toBe(false);
    expect(redirectUriProblem('https://app.example.org\\evil/cb', 'production')).toMatch(/backslash/);
    expect(redirectUriProblem('https:app.example.org/cb', 'production')).toBeDefined();
    expect(redirectUriProblem('https://app.example.org\\cb', 'production')).toBeDefined();
    expect(redirectUriProblem('http://2130706433/cb', 'sandbox')).toMatch(/canonical/);
    expect(redirectUriMatches('http://2130706433/cb', ['http://127.0.0.1/cb'], 'sandbox')).toBe(false);
  });
});
