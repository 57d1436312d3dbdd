import http from 'node:http';

/**
 * A request to one listener addressed to another host name: a second process of a deployment
 * started with the first one's public URL answers for that host, whichever port it listens on.
 * fetch cannot set Host, so this uses node:http. Resolves to the status.
 */
export function statusAtHost(
  url: string,
  host: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<number> {
  const body = init.body;
  const headers = { ...init.headers, host, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) };
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: init.method ?? 'GET', headers }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    request.on('error', reject);
    request.end(body);
  });
}
