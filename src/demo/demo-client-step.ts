import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../db/database.js';
import { readClientsFile } from '../oidc/clients/file-store.js';
import { addClient, rotateClientSecret } from '../oidc/clients/service.js';
import { SCOPES } from '../accounts/scopes.js';
import type { SeedContext, SeedStep } from './seed.js';

/** The dev profile's sandbox demo client, whose credentials the start banner prints. */
export const DEMO_CLIENT_NAME = 'Almoner Demo App';
export const DEMO_REDIRECT_URIS = ['http://127.0.0.1:8080/callback', 'http://localhost:8080/callback'];

export interface DemoClientCredentials {
  client_id: string;
  client_secret: string;
  environment: 'sandbox';
  redirect_uris: string[];
  scopes: string[];
}

export function demoClientFile(dataDir: string): string {
  return path.join(dataDir, 'demo-client.json');
}

export function readDemoClient(dataDir: string): DemoClientCredentials | undefined {
  try {
    return JSON.parse(fs.readFileSync(demoClientFile(dataDir), 'utf8')) as DemoClientCredentials;
  } catch {
    return undefined;
  }
}

/** Registers the demo client once, or gives an existing one a fresh secret when its credentials file is gone. */
export async function ensureDemoClient(db: Db, ctx: SeedContext): Promise<DemoClientCredentials> {
  const existing = readClientsFile(ctx.clientsFile, 'dev').entries.find((c) => c.environment === 'sandbox' && c.name === DEMO_CLIENT_NAME);
  const saved = readDemoClient(ctx.dataDir);
  if (existing && saved?.client_id === existing.client_id) return saved;
  // Demo data is seeded in the dev profile only.
  const registry = { db, clientsFile: ctx.clientsFile, passwordParams: ctx.passwordParams, profile: 'dev' as const };
  const issued = existing
    ? { ...(await rotateClientSecret(registry, existing.client_id)), environment: 'sandbox' as const }
    : await addClient(registry, { environment: 'sandbox', name: DEMO_CLIENT_NAME, redirectUris: DEMO_REDIRECT_URIS, scopes: [...SCOPES] });
  const credentials: DemoClientCredentials = {
    client_id: issued.client_id,
    client_secret: issued.client_secret,
    environment: 'sandbox',
    redirect_uris: DEMO_REDIRECT_URIS,
    scopes: [...SCOPES],
  };
  fs.mkdirSync(ctx.dataDir, { recursive: true });
  fs.writeFileSync(demoClientFile(ctx.dataDir), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return credentials;
}

export const demoClientStep: SeedStep = {
  name: '2026-11-22-demo-client',
  async run() {
    // Registration writes the clients file, so it happens after the step is claimed.
  },
  async after(db, ctx) {
    await ensureDemoClient(db, ctx);
  },
};
