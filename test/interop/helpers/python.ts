import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PYTHON } from '../../../scripts/ensure-interop.mjs';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'python_client.py');

export interface PythonClientConfig {
  library: 'authlib' | 'requests-oauthlib';
  issuer: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  scope: string;
}

export type Steps = Record<string, Record<string, unknown>>;

/**
 * Runs test/interop/python_client.py with Debian's python3: it prints its authorization URL,
 * `browse` takes the user through the pages and returns the callback URL, which goes back to
 * the script; resolves with the steps it reports.
 */
export async function runPythonClient(config: PythonClientConfig, browse: (authorizationUrl: string) => Promise<URL>): Promise<Steps> {
  const child = spawn(PYTHON, [SCRIPT, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const line = await lines.next();
    if (line.done) throw new Error(`${config.library} client ended early (exit ${await exited}):\n${stderr}`);
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  try {
    const first = await next();
    if (typeof first.authorization_url !== 'string') throw new Error(`${config.library} client: ${JSON.stringify(first)}\n${stderr}`);
    const callback = await browse(first.authorization_url);
    child.stdin.end(`${callback.toString()}\n`);
    const result = await next();
    if (result.error) throw new Error(`${config.library} client failed: ${String(result.error)}\n${stderr}`);
    return result.steps as Steps;
  } finally {
    child.kill();
  }
}
