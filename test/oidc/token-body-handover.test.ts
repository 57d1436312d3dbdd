import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { basic, endpoints, obtainTokens, tokenRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The token endpoint's pre-middleware reads the form before the provider does; the provider
 * must then read it as a fresh request body, not fall back to a pre-parsed one with its
 * "already parsed request body" warning (console.warn, once per process).
 */

const REDIRECT = 'https://app.example.org/callback';
const { server, staff } = useOAuthServer({ config: { refresh_reuse_grace_seconds: 5 } });

let warnings: string[];

beforeEach(() => {
  warnings = [];
  const keep = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));
  vi.spyOn(console, 'warn').mockImplementation(keep);
  vi.spyOn(console, 'error').mockImplementation(keep);
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    warnings.push(String(chunk));
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  });
  process.on('warning', onWarning);
});

afterEach(() => {
  process.off('warning', onWarning);
  vi.restoreAllMocks();
});

function onWarning(warning: Error) {
  warnings.push(`${warning.name}: ${warning.message}`);
}

describe('token requests hand their body to the provider as it expects', () => {
  it('a code exchange (redirect_uri filled in from the code) and a refresh log no "already parsed request body" warning', async () => {
    const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: staff.users.member,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const refreshed = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.access_token).toEqual(expect.any(String));

    expect(warnings.filter((w) => /already parsed request body/.test(w))).toEqual([]);
    expect(warnings.filter((w) => /oidc-provider WARNING/.test(w))).toEqual([]);
  });

  it('a chunked refresh request (no Content-Length) is read as sent, with no such warning', async () => {
    const client = await server.registerClient({ environment: 'sandbox', redirectUris: [REDIRECT] });
    const { tokens } = await obtainTokens(server, {
      environment: 'sandbox',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.admin,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }).toString();
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(form);
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10));
        controller.close();
      },
    });
    const response = await fetch(endpoints(server, 'sandbox').token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.refresh_token).toEqual(expect.any(String));
    expect(warnings.filter((w) => /already parsed request body/.test(w))).toEqual([]);
  });
});
