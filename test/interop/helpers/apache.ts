import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from '../../helpers/app.js';
import { APACHE_BINARY, APACHE_MODULES } from '../../../scripts/ensure-interop.mjs';

/**
 * Apache httpd with mod_auth_openidc as a real relying party: a non-daemon child process
 * (-D FOREGROUND) with its own configuration in a temporary directory, on a loopback port.
 * Apache cannot bind port 0 and report it, so a free port is picked and the start retried
 * when another process takes it first.
 */

export interface ApacheSite {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** Everything Apache wrote to its error log so far. */
  log(): string;
  close(): Promise<void>;
}

/** A port that was free a moment ago (Apache binds it itself, hence the retry in startApache). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// Workers drop root privileges to this user (Debian's web server user) when started as root.
const RUN_AS = process.getuid?.() === 0 ? 'User www-data\nGroup www-data\n' : '';

function baseConfig(dir: string, port: number): string {
  const modules = ['mpm_prefork', 'authn_core', 'authz_core', 'authz_user', 'alias', 'cgi', 'auth_openidc'];
  return [
    `ServerRoot "${dir}"`,
    'ServerName 127.0.0.1',
    `Listen 127.0.0.1:${port}`,
    `PidFile "${dir}/httpd.pid"`,
    `DefaultRuntimeDir "${dir}"`,
    `Mutex file:${dir} default`,
    ...modules.map((name) => `LoadModule ${name}_module ${APACHE_MODULES}/mod_${name}.so`),
    RUN_AS,
    'StartServers 1',
    'MinSpareServers 1',
    'MaxSpareServers 2',
    `ErrorLog "${dir}/error.log"`,
    'LogLevel warn auth_openidc:info',
    `DocumentRoot "${dir}/htdocs"`,
  ].join('\n');
}

/** A CGI script printing the request's OIDC_* environment (set by OIDCPassClaimsAs environment) as JSON. */
const CLAIMS_CGI = `#!/usr/bin/python3
import base64, hashlib, json, os
env = {k: v for k, v in os.environ.items() if k.startswith('OIDC_')}
# Not the access token itself: its SHA-256 (base64url), which is how Almoner stores it.
token = env.pop('OIDC_access_token', '')
env['access_token_hash'] = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).decode().rstrip('=') if token else ''
print('Content-Type: application/json')
print()
print(json.dumps(env, sort_keys=True))
`;

export interface ApacheOptions {
  /** The mod_auth_openidc directives for a site on `origin` (its OIDCRedirectURI is under /protected/). */
  oidcConfig(origin: string): Promise<string>;
}

/** Starts Apache with mod_auth_openidc in front of /protected/ (a CGI printing the claims). */
export async function startApache(options: ApacheOptions): Promise<ApacheSite> {
  const dir = tempDir('almoner-apache-');
  fs.mkdirSync(path.join(dir, 'htdocs'));
  fs.mkdirSync(path.join(dir, 'cgi'));
  fs.writeFileSync(path.join(dir, 'cgi', 'claims'), CLAIMS_CGI, { mode: 0o755 });
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const config = [
      baseConfig(dir, port),
      await options.oidcConfig(origin),
      `ScriptAlias /protected/ "${dir}/cgi/"`,
      '<Location /protected/>',
      '  AuthType openid-connect',
      '  Require valid-user',
      '</Location>',
      '',
    ].join('\n');
    const file = path.join(dir, 'httpd.conf');
    fs.writeFileSync(file, config);
    // Its own process group: on shutdown Apache signals its whole group (SIGTERM), which
    // would otherwise take the test worker with it.
    const child = spawn(APACHE_BINARY, ['-f', file, '-D', 'FOREGROUND'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const outcome = await new Promise<'ready' | 'exited'>((resolve) => {
      // Apache answers once it has bound its socket and forked its first worker: the positive signal.
      const probe = setInterval(() => {
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.destroy();
          if (fs.existsSync(path.join(dir, 'httpd.pid'))) {
            clearInterval(probe);
            resolve('ready');
          }
        });
        socket.on('error', () => socket.destroy());
      }, 50);
      child.once('exit', () => {
        clearInterval(probe);
        resolve('exited');
      });
    });
    if (outcome === 'ready') {
      // Not left behind if the test worker ends without closing it.
      const orphanGuard = () => child.kill('SIGKILL');
      process.once('exit', orphanGuard);
      child.once('exit', () => process.off('exit', orphanGuard));
      const log = () => output + readIfThere(path.join(dir, 'error.log'));
      return { origin, log, close: () => stop(child) };
    }
    const log = output + readIfThere(path.join(dir, 'error.log'));
    if (/Address already in use/.test(log) && attempt < 5) continue;
    throw new Error(`Apache did not start (${APACHE_BINARY} -f ${file}):\n${log}`);
  }
}

function readIfThere(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // SIGTERM: Apache stops its workers and exits ("graceful-stop" would wait for requests).
  child.kill('SIGTERM');
  await exited;
}

export const cryptoPassphrase = () => crypto.randomBytes(24).toString('base64url');
