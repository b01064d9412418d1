// HTTP GETs for the knowledge sync: undici with timeouts, a size limit, conditional requests (ETag, Last-Modified).
import { request } from 'undici';

export interface FetchOptions {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
}

export type FetchResult =
  | { kind: 'ok'; body: string; contentType: string; etag?: string; lastModified?: string }
  | { kind: 'not_modified' }
  | { kind: 'gone'; status: number }
  | { kind: 'failed'; reason: string };

const MAX_REDIRECTS = 5;

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export async function fetchPage(url: string, o: FetchOptions, validators: { etag?: string; lastModified?: string } = {}): Promise<FetchResult> {
  const headers: Record<string, string> = {
    'user-agent': o.userAgent,
    accept: 'text/html, application/xhtml+xml, application/xml, text/xml, text/plain;q=0.8, */*;q=0.1',
  };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  try {
    let res = await request(url, { method: 'GET', headers, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs });
    for (let hops = 0; res.statusCode >= 301 && res.statusCode <= 308 && res.statusCode !== 304 && hops < MAX_REDIRECTS; hops++) {
      const location = header(res.headers.location);
      await res.body.dump();
      if (!location) return { kind: 'failed', reason: `HTTP ${res.statusCode} without a location` };
      url = new URL(location, url).toString();
      res = await request(url, { method: 'GET', headers, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs });
    }
    if (res.statusCode === 304) {
      await res.body.dump();
      return { kind: 'not_modified' };
    }
    if (res.statusCode === 404 || res.statusCode === 410) {
      await res.body.dump();
      return { kind: 'gone', status: res.statusCode };
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      return { kind: 'failed', reason: `HTTP ${res.statusCode}` };
    }
    const declared = Number(header(res.headers['content-length']));
    if (declared > o.maxBytes) {
      res.body.destroy();
      return { kind: 'failed', reason: `larger than ${o.maxBytes} bytes` };
    }
    const parts: Buffer[] = [];
    let size = 0;
    for await (const part of res.body) {
      size += (part as Buffer).length;
      if (size > o.maxBytes) {
        res.body.destroy();
        return { kind: 'failed', reason: `larger than ${o.maxBytes} bytes` };
      }
      parts.push(part as Buffer);
    }
    const result: FetchResult = { kind: 'ok', body: Buffer.concat(parts).toString('utf8'), contentType: header(res.headers['content-type']) ?? '' };
    const etag = header(res.headers.etag);
    const lastModified = header(res.headers['last-modified']);
    if (etag) result.etag = etag;
    if (lastModified) result.lastModified = lastModified;
    return result;
  } catch (err) {
    return { kind: 'failed', reason: (err as { code?: string }).code ?? (err as Error).message };
  }
}
