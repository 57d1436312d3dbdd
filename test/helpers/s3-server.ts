import crypto from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { tempDir } from './temp-dirs.js';

/** The part of s3rver (which ships no types) the tests use. */
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => S3rverServer;

/**
 * A real S3-protocol server for the tests: s3rver (in a temporary folder, on a free port) behind
 * a small HTTP proxy that does what s3rver does not and S3 does:
 *
 * - s3rver does not verify Signature Version 4 ("Signature version 4 calculation is
 *   unimplemented", node_modules/s3rver/lib/middleware/authentication.js), so a tampered or
 *   expired presigned URL would be accepted. The proxy verifies every presigned request (one
 *   with X-Amz-Signature in its query) by recomputing the signature with the AWS SDK's own signer
 *   (@smithy/signature-v4's SignatureV4.presign, with the same credentials, date, expiry and
 *   signed headers) and answers 403 SignatureDoesNotMatch on a mismatch, 403 AccessDenied
 *   "Request has expired" past its expiry, as S3 does.
 * - s3rver writes a PUT's body straight into the object's file, so a request that stops short of
 *   its Content-Length leaves a partial object; S3 stores nothing of an incomplete request. The
 *   proxy reads a PUT's body whole (the tests' bodies are small) and forwards it only once
 *   complete.
 *
 * Requests the SDK signs in their Authorization header (Almoner's own calls) pass through as
 * they are.
 */

export const TEST_BUCKET = 'almoner-test';
export const TEST_CREDENTIALS = { accessKeyId: 'AKIAALMONERTEST', secretAccessKey: 'almoner-test-secret-access-key' };
export const TEST_REGION = 'us-east-1';

export interface TestS3Server {
  /** The proxy's origin: the endpoint to give the client (path-style). */
  endpoint: string;
  close(): Promise<void>;
}

/** SHA-256 and HMAC-SHA-256 as the signer wants them (its Checksum constructor). */
class Sha256 {
  private readonly hash: crypto.Hash | crypto.Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? crypto.createHash('sha256') : crypto.createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {}
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

function s3Error(res: http.ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

/** 20260101T120000Z → a Date. */
function amzDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`) : undefined;
}

/** Why a presigned request is refused, as S3 says it; undefined when it holds. */
async function presignedRefusal(req: http.IncomingMessage, url: URL): Promise<[string, string] | undefined> {
  const query: Record<string, string> = Object.fromEntries(url.searchParams);
  const given = query['X-Amz-Signature'];
  delete query['X-Amz-Signature'];
  const [accessKeyId, , region, service] = (query['X-Amz-Credential'] ?? '').split('/');
  const signingDate = amzDate(query['X-Amz-Date'] ?? '');
  const expiresIn = Number(query['X-Amz-Expires']);
  if (accessKeyId !== TEST_CREDENTIALS.accessKeyId)
    return ['InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  if (!signingDate || !Number.isInteger(expiresIn))
    return ['AuthorizationQueryParametersError', 'X-Amz-Date and X-Amz-Expires must be given.'];
  const headers: Record<string, string> = {};
  for (const name of (query['X-Amz-SignedHeaders'] ?? '').split(';')) headers[name] = String(req.headers[name] ?? '');
  // The payload hash the URL was signed with (the presigner's UNSIGNED-PAYLOAD), read from its header as the signer does.
  if (query['X-Amz-Content-Sha256']) headers['X-Amz-Content-Sha256'] = query['X-Amz-Content-Sha256'];
  const signer = new SignatureV4({
    credentials: TEST_CREDENTIALS,
    region: region ?? TEST_REGION,
    service: service ?? 's3',
    sha256: Sha256,
    uriEscapePath: false,
  });
  const [hostname, port] = (req.headers.host ?? '').split(':');
  const expected = await signer.presign(
    {
      method: req.method ?? 'GET',
      protocol: 'http:',
      hostname: hostname ?? '',
      port: port ? Number(port) : undefined,
      path: url.pathname,
      query,
      headers,
    },
    { signingDate, expiresIn },
  );
  if (expected.query?.['X-Amz-Signature'] !== given) {
    return ['SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.'];
  }
  if (signingDate.getTime() + expiresIn * 1000 < Date.now()) return ['AccessDenied', 'Request has expired'];
  return undefined;
}

function readWhole(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    // Stopped short of its Content-Length: S3 keeps nothing.
    req.on('error', () => resolve(undefined));
    req.on('aborted', () => resolve(undefined));
  });
}

export async function startTestS3Server(): Promise<TestS3Server> {
  // s3rver knows one key pair (S3RVER/S3RVER) by id; ours is added to its one account, so a
  // secret of our own travels through the tests (and can be looked for in errors).
  (
    require('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } }
  ).DUMMY_ACCOUNT.createKeyPair(TEST_CREDENTIALS.accessKeyId, TEST_CREDENTIALS.secretAccessKey);
  const s3rver = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: tempDir('almoner-s3rver-'),
    configureBuckets: [{ name: TEST_BUCKET, configs: [] }],
    vhostBuckets: false,
  });
  const upstream = await s3rver.run();
  const proxy = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
      if (url.searchParams.has('X-Amz-Signature')) {
        const refusal = await presignedRefusal(req, url);
        if (refusal) {
          req.resume();
          return s3Error(res, 403, ...refusal);
        }
      }
      const body = req.method === 'PUT' ? await readWhole(req) : undefined;
      if (req.method === 'PUT' && body === undefined) return res.destroy();
      const headers = { ...req.headers };
      if (body) headers['content-length'] = String(body.length);
      delete headers['transfer-encoding'];
      const forward = http.request({ host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forward.on('error', () => res.destroy());
      if (body) forward.end(body);
      else req.pipe(forward);
    })();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await s3rver.close();
    },
  };
}
