// The one module that knows whether the UI talks to the Tauri shell (IPC + events) or to
// `crosscheck serve` (HTTP + SSE). Nothing else may import `@tauri-apps/*`.

import { invoke as tauriInvoke } from '@tauri-apps/api/core';
import { listen as tauriListen } from '@tauri-apps/api/event';
import type { Request } from '$lib/types/Request';
import type { Stamped } from '$lib/types/Stamped';
import { currentClientId, currentToken, HostError, isDesktop, type ResponseOf, webInvoke } from './web';

export {
  currentClientId,
  HostError,
  isApiError,
  isDesktop,
  readToken,
  resetTokenForTests,
  type ResponseOf,
} from './web';

/** Tauri event that carries batches of changes. */
export const CHANGES_EVENT = 'crosscheck://changes';

/** Runs `act` on the desktop window; its module is loaded when first needed (desktop only, and
 * not in the page's first script). A failure is dropped: the window may be closing. */
export function withDesktopWindow(act: (w: import('@tauri-apps/api/window').Window) => Promise<unknown>): void {
  if (!isDesktop) return;
  void import('@tauri-apps/api/window')
    .then(({ getCurrentWindow }) => act(getCurrentWindow()))
    .catch(() => undefined);
}

/** Tauri event sent when the UI fell behind the change stream and must reload its snapshot. */
export const RESYNC_EVENT = 'crosscheck://resync';

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

// ---------------------------------------------------------------------------------------------
// Change stream

/** `open`: the stream is (again) delivering; re-fetch the snapshot. `lost`: it broke. */
export type StreamState = 'open' | 'lost';

/** Called with the stream's state; on `open`, `from` is the sequence number the stream starts
 * after when the transport tells it (web mode): a snapshot at `from` or later misses nothing. */
export type OnStreamState = (state: StreamState, from?: number) => void;

/** The web stream's first event: `{"seq": N}`, the number it starts after. */
export const START_EVENT = 'start';

/** Subscribes to the change stream. Returns a function that unsubscribes. */
export function subscribe(onChanges: (changes: Stamped[]) => void, onState?: OnStreamState): () => void {
  return isDesktop ? tauriSubscribe(onChanges, onState) : webSubscribe(onChanges, onState);
}

function tauriSubscribe(onChanges: (changes: Stamped[]) => void, onState?: OnStreamState): () => void {
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

/** The sequence number of a `start` event's data, or undefined when it has none. */
export function parseStart(data: string): number | undefined {
  try {
    const seq: unknown = (JSON.parse(data) as { seq?: unknown } | null)?.seq;
    return typeof seq === 'number' && Number.isFinite(seq) ? seq : undefined;
  } catch {
    return undefined;
  }
}

function webSubscribe(onChanges: (changes: Stamped[]) => void, onState?: OnStreamState): () => void {
  let source: EventSource | null = null;
  let closed = false;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let backoff = 500;
  let lost = false;
  /** Whether this connection reported itself open (its `start` event, or its first changes). */
  let opened = false;

  const open = (from?: number) => {
    if (opened) return;
    opened = true;
    backoff = 500;
    lost = false;
    onState?.('open', from);
  };

  const handle = (event: MessageEvent<string>) => {
    let changes: Stamped[];
    try {
      changes = parseChanges(event.data);
    } catch {
      return; // a heartbeat or a malformed frame: nothing to apply
    }
    // A server that sends no `start` event: open without a number.
    open();
    if (changes.length) onChanges(changes);
  };

  const connect = () => {
    if (closed) return;
    const tok = currentToken();
    const url = `/api/events?client=${currentClientId()}${tok ? `&token=${encodeURIComponent(tok)}` : ''}`;
    const es = new EventSource(url);
    source = es;
    opened = false;
    // Open is reported on the stream's first event, `start`, which says where it starts.
    es.onopen = () => {
      opened = false;
    };
    es.addEventListener(START_EVENT, ((event: MessageEvent<string>) => open(parseStart(event.data))) as EventListener);
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
