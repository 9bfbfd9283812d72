import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HostError, currentClientId, invoke, isDesktop, parseChanges, readToken, resetTokenForTests, subscribe } from '$lib/host';
import type { Stamped } from '$lib/types/Stamped';

class FakeEventSource {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  static instances: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  onopen: ((e: Event) => void) | null = null;
  onmessage: ((e: MessageEvent<string>) => void) | null = null;
  onerror: ((e: Event) => void) | null = null;
  listeners = new Map<string, ((e: MessageEvent<string>) => void)[]>();
  closed = false;
  constructor(public url: string) {
    FakeEventSource.instances.push(this);
  }
  addEventListener(type: string, fn: (e: MessageEvent<string>) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close() {
    this.closed = true;
    this.readyState = FakeEventSource.CLOSED;
  }
  /** Opens as the backend's stream does: connected, then its `start` event. */
  open(from = 0) {
    this.readyState = FakeEventSource.OPEN;
    this.onopen?.(new Event('open'));
    this.message(JSON.stringify({ seq: from }), 'start');
  }
  message(data: string, type = 'message') {
    const event = new MessageEvent(type, { data });
    if (type === 'message') this.onmessage?.(event);
    for (const fn of this.listeners.get(type) ?? []) fn(event);
  }
  fail(closed: boolean) {
    this.readyState = closed ? FakeEventSource.CLOSED : FakeEventSource.CONNECTING;
    this.onerror?.(new Event('error'));
  }
}

const stamped: Stamped[] = [{ seq: 1, change: { type: 'sessionRemoved', sessionId: 's1' } }];

beforeEach(() => {
  sessionStorage.clear();
  resetTokenForTests();
  history.replaceState(null, '', '/?token=secret-token&keep=1#frag');
  FakeEventSource.instances = [];
  vi.stubGlobal('EventSource', FakeEventSource);
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('mode', () => {
  it('is web mode without Tauri internals', () => {
    expect(isDesktop).toBe(false);
  });
});

describe('token', () => {
  it('reads ?token=, keeps it in sessionStorage and removes it from the URL', () => {
    expect(readToken()).toBe('secret-token');
    expect(location.search).toBe('?keep=1');
    expect(location.hash).toBe('#frag');
    expect(sessionStorage.getItem('crosscheck.token')).toBe('secret-token');
    // Later loads (URL without the token) read it from sessionStorage.
    expect(readToken()).toBe('secret-token');
  });

  it('takes the token the server wrote into the page over a stale one in sessionStorage', () => {
    history.replaceState(null, '', '/');
    const meta = document.createElement('meta');
    meta.name = 'crosscheck-token';
    meta.content = 'page-token';
    document.head.append(meta);
    try {
      sessionStorage.setItem('crosscheck.token', 'stale-token');
      expect(readToken()).toBe('page-token');
    } finally {
      meta.remove();
    }
    expect(readToken()).toBe('stale-token');
  });
});

describe('invoke over HTTP', () => {
  it('POSTs the request as JSON with the bearer token', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify({ messageId: 'msg_1' }), { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    const result = await invoke({ cmd: 'sendPrompt', sessionId: 's1', text: 'hi' });
    expect(result).toEqual({ messageId: 'msg_1' });
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api');
    expect(init.method).toBe('POST');
    expect((init.headers as Record<string, string>).Authorization).toBe('Bearer secret-token');
    expect((init.headers as Record<string, string>)['X-Crosscheck-Client']).toBe(currentClientId());
    expect(JSON.parse(init.body as string)).toEqual({ cmd: 'sendPrompt', sessionId: 's1', text: 'hi' });
  });

  it('returns null for an empty body', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('', { status: 200 })));
    await expect(invoke({ cmd: 'abort', sessionId: 's1' })).resolves.toBeNull();
  });

  it('throws the ApiError of a non-2xx answer as a HostError', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify({ code: 'not_found', message: 'no session ses_x' }), { status: 404 })),
    );
    const err = await invoke({ cmd: 'openSession', sessionId: 'ses_x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err).toMatchObject({ code: 'not_found', message: 'no session ses_x' });
  });

  it('maps a non-JSON error body to a code', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('nope', { status: 401 })));
    await expect(invoke({ cmd: 'snapshot' })).rejects.toMatchObject({ code: 'unauthorized' });
    vi.stubGlobal('fetch', vi.fn(async () => new Response('<html>', { status: 502 })));
    await expect(invoke({ cmd: 'snapshot' })).rejects.toMatchObject({ code: 'internal' });
  });

  it('reports a network failure as host_unreachable', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch');
      }),
    );
    await expect(invoke({ cmd: 'snapshot' })).rejects.toMatchObject({ code: 'host_unreachable' });
  });
});

describe('HostError.from', () => {
  it('accepts ApiError objects, JSON strings, plain strings and errors', () => {
    expect(HostError.from({ code: 'storage', message: 'disk full' })).toMatchObject({ code: 'storage', message: 'disk full' });
    expect(HostError.from('{"code":"invalid_request","message":"bad"}')).toMatchObject({ code: 'invalid_request' });
    expect(HostError.from('boom')).toMatchObject({ code: 'internal', message: 'boom' });
    expect(HostError.from(new Error('x'))).toMatchObject({ code: 'internal', message: 'x' });
  });
});

describe('subscribe over SSE', () => {
  it('connects with the client id and the token and delivers batches of changes', () => {
    const changes: Stamped[][] = [];
    const states: string[] = [];
    const stop = subscribe(
      (c) => changes.push(c),
      (s) => states.push(s),
    );
    const es = FakeEventSource.instances[0];
    expect(currentClientId()).toMatch(/^[0-9a-f]{24}$/);
    expect(es.url).toBe(`/api/events?client=${currentClientId()}&token=secret-token`);
    es.open();
    es.message(JSON.stringify(stamped));
    es.message(JSON.stringify(stamped), 'changes');
    es.message('not json'); // ignored
    expect(changes).toEqual([stamped, stamped]);
    expect(states).toEqual(['open']);
    stop();
    expect(es.closed).toBe(true);
  });

  it('reports a lost stream, and a re-open (when the snapshot must be fetched again)', () => {
    const states: string[] = [];
    subscribe(
      () => undefined,
      (s) => states.push(s),
    );
    const es = FakeEventSource.instances[0];
    es.open();
    es.fail(false); // EventSource retries by itself
    es.fail(false);
    es.open();
    expect(states).toEqual(['open', 'lost', 'open']);
    expect(FakeEventSource.instances).toHaveLength(1);
  });

  it('reconnects itself when the server closed the stream', () => {
    vi.useFakeTimers();
    const states: string[] = [];
    const stop = subscribe(
      () => undefined,
      (s) => states.push(s),
    );
    FakeEventSource.instances[0].open();
    FakeEventSource.instances[0].fail(true);
    expect(FakeEventSource.instances[0].closed).toBe(true);
    vi.advanceTimersByTime(600);
    expect(FakeEventSource.instances).toHaveLength(2);
    FakeEventSource.instances[1].open();
    expect(states).toEqual(['open', 'lost', 'open']);
    stop();
  });

  it('reports the stream open on its start event, with the number it starts after', () => {
    const states: [string, number | undefined][] = [];
    subscribe(
      () => undefined,
      (s, from) => states.push([s, from]),
    );
    const es = FakeEventSource.instances[0];
    es.open(41);
    expect(states).toEqual([['open', 41]]);
    // A stream without a start event (an older backend) is open on its first changes.
    es.fail(false);
    es.onopen?.(new Event('open'));
    es.message(JSON.stringify(stamped));
    expect(states).toEqual([
      ['open', 41],
      ['lost', undefined],
      ['open', undefined],
    ]);
  });

  it('parses a single Stamped as a batch of one', () => {
    expect(parseChanges(JSON.stringify(stamped[0]))).toEqual(stamped);
    expect(parseChanges('{"hello":1}')).toEqual([]);
  });
});
