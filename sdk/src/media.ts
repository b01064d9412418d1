// Downloading a file a customer sent on WhatsApp, for a tool handler: Parley
// fetches it from Meta's Graph API with the channel's token (which neither
// your backend nor the model ever sees) and streams it back over HTTP
// (`GET /whatsapp/media/:mediaId`, service secret).

export interface DownloadedMedia {
  mediaId: string;
  data: Buffer;
  mimeType: string;
  /** Bytes. */
  size: number;
  /** Meta's hash of the file, when the Graph API gave one. */
  sha256?: string;
}

export interface DownloadMediaOptions {
  /** Abort after this long (default 60 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class ParleyMediaError extends Error {
  constructor(
    message: string,
    /** HTTP status from Parley (0: Parley not reached). */
    readonly status: number,
    /** Parley's error code: `media_not_found`, `media_unavailable`, `upstream_error`, `unauthorized`, … */
    readonly code: string,
  ) {
    super(message);
    this.name = 'ParleyMediaError';
  }
}

/** `ws://h:p/sdk` or `http://h:p` → `http://h:p` (the base of Parley's HTTP routes). */
export function httpBaseUrl(url: string): string {
  const u = new URL(url);
  if (u.protocol === 'ws:') u.protocol = 'http:';
  else if (u.protocol === 'wss:') u.protocol = 'https:';
  u.pathname = u.pathname.replace(/\/sdk\/?$/, '').replace(/\/$/, '');
  u.search = '';
  u.hash = '';
  return u.toString().replace(/\/$/, '');
}

export async function downloadMedia(target: { url: string; secret: string }, mediaId: string, options: DownloadMediaOptions = {}): Promise<DownloadedMedia> {
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 60_000), ...(options.signal ? [options.signal] : [])];
  let res: Response;
  try {
    res = await fetch(`${httpBaseUrl(target.url)}/whatsapp/media/${encodeURIComponent(mediaId)}`, {
      headers: { authorization: `Bearer ${target.secret}` },
      signal: AbortSignal.any(signals),
    });
  } catch (err) {
    throw new ParleyMediaError(`Could not reach Parley for media ${mediaId}: ${(err as Error).message}`, 0, 'network_error');
  }
  if (!res.ok) {
    let error: { code?: unknown; message?: unknown } = {};
    try {
      error = ((await res.json()) as { error?: typeof error }).error ?? {};
    } catch {
      /* not JSON: the status says enough */
    }
    const code = typeof error.code === 'string' ? error.code : `http_${res.status}`;
    throw new ParleyMediaError(typeof error.message === 'string' ? error.message : `Parley answered HTTP ${res.status}`, res.status, code);
  }
  const data = Buffer.from(await res.arrayBuffer());
  const sha256 = res.headers.get('x-whatsapp-sha256') ?? undefined;
  return {
    mediaId,
    data,
    mimeType: res.headers.get('content-type') ?? 'application/octet-stream',
    size: data.length,
    ...(sha256 ? { sha256 } : {}),
  };
}
