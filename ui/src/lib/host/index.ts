// The one module that knows whether the UI talks to the Tauri shell (IPC + events) or to
// `crosscheck serve` (HTTP + SSE). Nothing else may import `@tauri-apps/*`.

import { invoke as tauriInvoke } from '@tauri-apps/api/core';
import { listen as tauriListen } from '@tauri-apps/api/event';
import type { ApiError } from '$lib/types/ApiError';
import type { ErrorCode } from '$lib/types/ErrorCode';
import type { Request } from '$lib/types/Request';
import type { Responses } from '$lib/types/Responses';
import type { Stamped } from '$lib/types/Stamped';

/** What a request answers: looked up by its `cmd` in the table the backend exports. */
export type ResponseOf<R extends Request> = Responses[R['cmd']];

/** Whether the UI runs inside the Tauri window. */
export const isDesktop: boolean = typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;

/** Tauri event that carries batches of changes. */
export const CHANGES_EVENT = 'crosscheck://changes';

/** Tauri event sent when the UI fell behind the change stream and must reload its snapshot. */
export const RESYNC_EVENT = 'crosscheck://resync';

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

function currentToken(): string | null {
  if (token === undefined) token = isDesktop ? null : readToken();
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

/** Sends one Api request and returns its result, typed by the request. Throws a HostError. */
export async function invoke<R extends Request>(request: R): Promise<ResponseOf<R>> {
  if (isDesktop) {
    try {
      return await tauriInvoke<ResponseOf<R>>('api', { request });
    } catch (err) {
      throw HostError.from(err);
    }
  }
  return webInvoke(request);
}

async function webInvoke<R extends Request>(request: R): Promise<ResponseOf<R>> {
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

// ---------------------------------------------------------------------------------------------
// Change stream

/** `open`: the stream is (again) delivering; re-fetch the snapshot. `lost`: it broke. */
export type StreamState = 'open' | 'lost';

/** Subscribes to the change stream. Returns a function that unsubscribes. */
export function subscribe(
  onChanges: (changes: Stamped[]) => void,
  onState?: (state: StreamState) => void,
): () => void {
  return isDesktop ? tauriSubscribe(onChanges, onState) : webSubscribe(onChanges, onState);
}

function tauriSubscribe(onChanges: (changes: Stamped[]) => void, onState?: (state: StreamState) => void): () => void {
  let unlisten: (() => void) | null = null;
  let closed = false;
  tauriListen<Stamped[] | Stamped>(CHANGES_EVENT, (event) => {
    const payload = event.payload;
    onChanges(Array.isArray(payload) ? payload : [payload]);
  }).then(
    (fn) => {
      if (closed) fn();
      else {
        unlisten = fn;
        onState?.('open');
      }
    },
    () => onState?.('lost'),
  );
  // Changes were dropped for this window: report the stream as lost and back, which reloads.
  let unlistenResync: (() => void) | null = null;
  tauriListen(RESYNC_EVENT, () => {
    onState?.('lost');
    onState?.('open');
  }).then(
    (fn) => {
      if (closed) fn();
      else unlistenResync = fn;
    },
    () => undefined,
  );
  return () => {
    closed = true;
    unlisten?.();
    unlistenResync?.();
  };
}

/** Parses one SSE message's data: a JSON array of Stamped (a single object is accepted too). */
export function parseChanges(data: string): Stamped[] {
  const parsed: unknown = JSON.parse(data);
  if (Array.isArray(parsed)) return parsed as Stamped[];
  if (parsed && typeof parsed === 'object' && 'seq' in parsed && 'change' in parsed) return [parsed as Stamped];
  return [];
}

function webSubscribe(onChanges: (changes: Stamped[]) => void, onState?: (state: StreamState) => void): () => void {
  let source: EventSource | null = null;
  let closed = false;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let backoff = 500;
  let lost = false;

  const handle = (event: MessageEvent<string>) => {
    let changes: Stamped[];
    try {
      changes = parseChanges(event.data);
    } catch {
      return; // a heartbeat or a malformed frame: nothing to apply
    }
    if (changes.length) onChanges(changes);
  };

  const connect = () => {
    if (closed) return;
    const tok = currentToken();
    const url = `/api/events?client=${clientId}${tok ? `&token=${encodeURIComponent(tok)}` : ''}`;
    const es = new EventSource(url);
    source = es;
    es.onopen = () => {
      backoff = 500;
      lost = false;
      onState?.('open');
    };
    es.onmessage = handle;
    es.addEventListener('changes', handle as EventListener);
    es.onerror = () => {
      if (closed) return;
      if (!lost) {
        lost = true;
        onState?.('lost');
      }
      // EventSource retries by itself unless the server refused the stream (CLOSED).
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        source = null;
        retryTimer = setTimeout(connect, backoff);
        backoff = Math.min(backoff * 2, 10_000);
      }
    };
  };

  connect();
  return () => {
    closed = true;
    if (retryTimer) clearTimeout(retryTimer);
    source?.close();
    source = null;
  };
}

// ---------------------------------------------------------------------------------------------
// Small host services

/** Opens a URL in the system browser (desktop) or a new tab (web). */
export function openExternal(url: string): void {
  if (!/^(https?:|mailto:)/i.test(url)) return;
  if (isDesktop) {
    tauriInvoke('plugin:opener|open_url', { url }).catch(() => {
      window.open(url, '_blank', 'noopener,noreferrer');
    });
    return;
  }
  window.open(url, '_blank', 'noopener,noreferrer');
}

/** Copies text to the clipboard. */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.appendChild(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/** Whether the native folder dialog is available (the desktop app only). */
export const canPickFolder: boolean = isDesktop;

/** Opens the native folder dialog (desktop only); the chosen folder, or null when cancelled
 * or unavailable. */
export async function pickFolder(startIn?: string): Promise<string | null> {
  if (!isDesktop) return null;
  const { open } = await import('@tauri-apps/plugin-dialog');
  const picked = await open({ directory: true, multiple: false, ...(startIn ? { defaultPath: startIn } : {}) });
  return typeof picked === 'string' ? picked : null;
}
