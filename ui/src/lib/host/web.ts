// The web transport's requests (`crosscheck serve`: HTTP with the page's token), apart from the
// rest of the host module so that the page's first script can ask the snapshot with it alone
// (see early.ts). `index.ts` is the host module's face; it re-exports what is here.

import type { ApiError } from '$lib/types/ApiError';
import type { ErrorCode } from '$lib/types/ErrorCode';
import type { Request } from '$lib/types/Request';
import type { Responses } from '$lib/types/Responses';

/** What a request answers: looked up by its `cmd` in the table the backend exports. */
export type ResponseOf<R extends Request> = Responses[R['cmd']];

/** Whether the UI runs inside the Tauri window. */
export const isDesktop: boolean = typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;

const TOKEN_KEY = 'crosscheck.token';

/** An error from the Api (`{code, message}`) or from the transport (`host_unreachable`). */
export class HostError extends Error implements ApiError {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'HostError';
    this.code = code;
  }

  /** Wraps anything thrown by a transport into a HostError. */
  static from(value: unknown, fallbackCode: ErrorCode = 'internal'): HostError {
    if (value instanceof HostError) return value;
    if (isApiError(value)) return new HostError(value.code, value.message);
    if (typeof value === 'string') {
      try {
        const parsed: unknown = JSON.parse(value);
        if (isApiError(parsed)) return new HostError(parsed.code, parsed.message);
      } catch {
        // not JSON: keep the text as the message
      }
      return new HostError(fallbackCode, value);
    }
    if (value instanceof Error) return new HostError(fallbackCode, value.message);
    return new HostError(fallbackCode, String(value));
  }
}

/** Whether a value has the `{code, message}` shape of an ApiError (the code is not checked
 * against the enum: an unknown code still localizes, as `error.unknown`). */
export function isApiError(value: unknown): value is ApiError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

// ---------------------------------------------------------------------------------------------
// Web token: `?token=` on first load, else the one the server wrote into the page (it serves
// the page only to holders of the token), else sessionStorage; removed from the visible URL.

let token: string | null | undefined;

/** Reads the web token from the URL (removing it from the address bar) or from sessionStorage. */
export function readToken(
  loc: Pick<Location, 'search' | 'pathname' | 'hash'> = location,
  storage: Pick<Storage, 'getItem' | 'setItem'> | null = safeSessionStorage(),
  hist: Pick<History, 'replaceState' | 'state'> | null = typeof history !== 'undefined' ? history : null,
  doc: Pick<Document, 'querySelector'> | null = typeof document !== 'undefined' ? document : null,
): string | null {
  const params = new URLSearchParams(loc.search);
  const fromUrl = params.get('token');
  if (fromUrl) {
    try {
      storage?.setItem(TOKEN_KEY, fromUrl);
    } catch {
      // storage full or denied: keep it in memory only
    }
    params.delete('token');
    const rest = params.toString();
    hist?.replaceState(hist.state, '', `${loc.pathname}${rest ? `?${rest}` : ''}${loc.hash}`);
    return fromUrl;
  }
  const fromPage = doc?.querySelector('meta[name="crosscheck-token"]')?.getAttribute('content');
  if (fromPage) return fromPage;
  try {
    return storage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

function safeSessionStorage(): Storage | null {
  try {
    return typeof sessionStorage !== 'undefined' ? sessionStorage : null;
  } catch {
    return null;
  }
}

/** The web token (read once). */
export function currentToken(): string | null {
  // Read again while there is none: the page's first script may run before the parser reached
  // the token the server wrote into the page.
  if (!token) token = isDesktop ? null : readToken();
  return token;
}

/** Test hook: forget the cached token so the next call reads it again. */
export function resetTokenForTests(): void {
  token = undefined;
}

// Read the token as early as possible so it leaves the address bar before anything else runs.
if (!isDesktop && typeof location !== 'undefined') currentToken();

// ---------------------------------------------------------------------------------------------
// Client id: names this page to the backend, which follows the transcripts it opens for it and
// releases them when its event stream ends (a closed tab, a reload). New on every page load.

function newClientId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const clientId = newClientId();

/** This page's client id (sent on the event stream and on every call in web mode). */
export function currentClientId(): string {
  return clientId;
}

// ---------------------------------------------------------------------------------------------
// Requests

/** Sends one Api request over HTTP and returns its result, typed by the request. Throws a
 * HostError. */
export async function webInvoke<R extends Request>(request: R): Promise<ResponseOf<R>> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Crosscheck-Client': clientId };
  const tok = currentToken();
  if (tok) headers.Authorization = `Bearer ${tok}`;
  let response: Response;
  try {
    response = await fetch('/api', { method: 'POST', headers, body: JSON.stringify(request) });
  } catch (err) {
    throw new HostError('host_unreachable', err instanceof Error ? err.message : String(err));
  }
  const text = await response.text().catch(() => '');
  if (!response.ok) {
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (isApiError(body)) throw new HostError(body.code, body.message);
    const code: ErrorCode = response.status === 401 || response.status === 403 ? 'unauthorized' : 'internal';
    throw new HostError(code, `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
  }
  if (!text) return null as ResponseOf<R>;
  try {
    return JSON.parse(text) as ResponseOf<R>;
  } catch {
    throw new HostError('internal', 'malformed response from the Crosscheck backend');
  }
}
