import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { childEnv, makeDataDir, PROJECT_ROOT, removeDataDir, startServer, type ServerProcess } from '../helpers/process.js';
import { documentationFiles, fencedBlocks, isRunnable, type FencedBlock } from './markdown.js';
import { BrowserReader, READERS, readerUrls, type Reader } from './browser-reader.js';

/**
 * Every ```sh runnable block of README.md and docs/ runs as written (docs/testing.md, "Runnable
 * examples in the documentation"): the blocks of one file, in order, in one bash with
 * `set -euo pipefail`, from the repository's directory, against a dev-profile server with its
 * demo data on a fresh database. The blocks read the public URLs from the server's own
 * variables (ALMONER_SANDBOX_BASE_URL …, defaulting to the documented ports), which the test
 * sets to the ports its server bound. Where an example waits for a person at a browser (it prints
 * the authorization URL and reads the address the browser came back to, or the donor flow's URL
 * and reads the workflow session id), one headless Chromium plays them as the document says
 * (browser-reader.ts) and pastes the answer.
 */

const TOOLS = ['bash', 'curl', 'openssl', 'jq'];
// A guard against a hung block, not a speed check: a file of blocks that each start the admin CLI
// (`npm run admin`, a Node process compiling TypeScript) takes minutes on a loaded 2-core host.
const SCRIPT_TIMEOUT_MS = 300_000;

const documents = documentationFiles()
  .map((file) => ({ file, blocks: fencedBlocks(fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8')).filter(isRunnable) }))
  .filter((document) => document.blocks.length > 0);

/** One script for a file's blocks; each block first announces its place on stderr. */
function script(file: string, blocks: FencedBlock[]): string {
  const parts = ['set -euo pipefail'];
  for (const block of blocks) parts.push(`printf '%s\\n' '::block ${file}:${block.line}' >&2`, block.body);
  return `${parts.join('\n')}\n`;
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  lastBlock: string | undefined;
  /** How many times the reader answered from the browser (approved, or gave). */
  approvals: number;
}

/** What plays the reader of a document whose examples wait for one. */
interface ReaderRole {
  reader: Reader;
  browser: BrowserReader;
  urls: ServerProcess['urls'];
}

function runBash(file: string, env: NodeJS.ProcessEnv, role?: ReaderRole): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // Standard input is where a waiting example reads the pasted address; the others get none.
    const child = spawn('bash', [file], { cwd: PROJECT_ROOT, env, stdio: [role ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let output = '';
    let stdout = '';
    let lastBlock: string | undefined;
    let approvals = 0;
    const fail = (error: unknown) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      stdout += text;
      if (!role) return;
      // Whole lines only: a URL may arrive in two pieces.
      const seen = readerUrls(stdout.slice(0, stdout.lastIndexOf('\n') + 1), role.urls);
      for (const url of seen.slice(approvals)) {
        approvals += 1;
        role.browser.play(role.reader, url).then(
          (answer) => child.stdin!.write(`${answer}\n`),
          (error: unknown) =>
            fail(new Error(`the reader could not finish at ${url} (last block: ${lastBlock}): ${String(error)}\n${output.slice(-6000)}`)),
        );
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      for (const match of text.matchAll(/^::block (\S+)$/gm)) lastBlock = match[1];
    });
    child.stdin?.on('error', () => undefined); // EPIPE when the script ended first
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not finish within ${SCRIPT_TIMEOUT_MS} ms (last block: ${lastBlock})\n${output.slice(-6000)}`));
    }, SCRIPT_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, lastBlock, approvals });
    });
  });
}

describe('runnable examples in README.md and docs/', () => {
  let database: TestDatabase | undefined;
  let dataDir: string | undefined;
  let server: ServerProcess | undefined;
  let scriptDir: string | undefined;
  let browser: BrowserReader | undefined;

  beforeAll(async () => {
    const missing = TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0);
    if (missing.length > 0) throw new Error(`the runnable examples need ${missing.join(', ')} on the PATH (docs/testing.md)`);
    scriptDir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-examples-'));
    database = await createTestDatabase();
    dataDir = makeDataDir();
    // The dev profile with its demo data, as `npm start` runs it, on ports of its own.
    server = await startServer({
      env: { DATABASE_URL: database.url, ALMONER_DATA_DIR: dataDir, ALMONER_DEMO_DATA: 'true' },
      readyTimeoutMs: 90_000,
    });
    browser = new BrowserReader(server.urls);
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    await server?.kill();
    await database?.drop();
    await removeDataDir(dataDir);
    if (scriptDir) fs.rmSync(scriptDir, { recursive: true, force: true });
  });

  it('include the README walkthrough: a client registered, a code flow with PKCE through the hosted pages, the exchange, /v1/donations, a colleague invited', () => {
    const readme = documents.find((document) => document.file === 'README.md');
    const text = readme?.blocks.map((block) => block.body).join('\n') ?? '';
    for (const step of [
      'admin -- clients add',
      'code_challenge_method=S256',
      'csrf',
      '/consent',
      'grant_type=authorization_code',
      '/v1/donations',
      'admin -- members invite',
      'admin -- mail list',
    ]) {
      expect(text, `README.md's runnable blocks lack ${step}`).toContain(step);
    }
  });

  for (const { file, blocks } of documents) {
    it(
      `${file}: its ${blocks.length} runnable block(s) run as written`,
      async () => {
        const urls = server!.urls;
        const scriptFile = path.join(scriptDir!, `${file.replace(/\W/g, '_')}.sh`);
        fs.writeFileSync(scriptFile, script(file, blocks));
        const env = childEnv({
          DATABASE_URL: database!.url,
          ALMONER_DATA_DIR: dataDir!,
          ALMONER_BASE_URL: urls.api,
          ALMONER_SANDBOX_BASE_URL: urls.sandboxApi,
          ALMONER_DASHBOARD_URL: urls.dashboard,
          ALMONER_SANDBOX_DASHBOARD_URL: urls.sandboxDashboard,
          // mktemp's files and downloads (e.g. a statement saved with curl -OJ) go where the test cleans up.
          TMPDIR: scriptDir!,
        });
        const reader = READERS[file];
        const result = await runBash(scriptFile, env, reader && { reader, browser: browser!, urls });
        const failed = result.lastBlock ?? `${file} (before its first block)`;
        expect(
          result.code,
          `the runnable block at ${failed} failed (exit ${result.code}${result.signal ? `, ${result.signal}` : ''})\n--- output ---\n${result.output.slice(-6000)}`,
        ).toBe(0);
        // A document that names a reader has an example that waits for one.
        if (reader)
          expect(result.approvals, `${file}: no example printed a sandbox authorization or donor-flow URL for the reader`).toBeGreaterThan(
            0,
          );
      },
      SCRIPT_TIMEOUT_MS + 10_000,
    );
  }
});
