// Follow an OpenCode event stream (`GET /global/event` or `GET /event?directory=D`) with fetch.
//
// Real 1.18.33 framing: plain `data: {...}` frames separated by a blank line, no `event:`/`id:`.
// `/global/event` wraps every event as `{directory, project, payload: {id, type, properties}}`
// (the first `server.connected` frame has only `{payload}`), and also repeats most events as
// `{payload: {type: "sync", syncEvent: {id, type: "session.created.1", seq, aggregateID, data}}}`.
// `/event` sends the bare `{id, type, properties}`. Events returned here are normalized to
// `{type, properties, id, directory, project, raw}`, each with `at`, when it arrived
// (ms since the epoch).

/** Parse an SSE byte stream into the JSON of each `data:` frame. */
export async function* sseFrames(body) {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = frame
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      try { yield JSON.parse(data); } catch { yield { type: 'unparsed', raw: data }; }
    }
  }
}

/** Normalize a `/global/event` or `/event` frame. */
export function normalizeEvent(frame) {
  const payload = frame && typeof frame.payload === 'object' ? frame.payload : frame;
  return {
    type: payload?.type,
    properties: payload?.properties ?? {},
    id: payload?.id,
    directory: frame?.directory,
    project: frame?.project,
    raw: frame,
  };
}

/**
 * Subscribe to an event stream. Resolves once the stream is live, so nothing the test does
 * afterwards is missed: OpenCode sends `server.connected` before it subscribes the stream to its
 * events (tens of ms later on a busy server), so until another frame arrives a harmless event
 * (a toast for a TUI, which no test server has) is asked again and again.
 * @returns {Promise<{events: object[], waitFor: (pred: (e) => boolean, opts?: {timeoutMs?: number, from?: number}) => Promise<object>,
 *   waitForIdle: (sessionID: string, opts?: {timeoutMs?: number, from?: number}) => Promise<object>, close: () => void}>}
 */
export async function subscribeEvents(baseUrl, { path = '/global/event', headers = {}, timeoutMs = 15_000 } = {}) {
  const ac = new AbortController();
  const events = [];
  const waiters = new Set();
  let ended = null;

  const res = await fetch(baseUrl + path, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: ac.signal,
  });
  if (!res.ok) throw new Error(`GET ${path} -> ${res.status}: ${await res.text()}`);

  let connected;
  const connectedP = new Promise((resolve) => { connected = resolve; });
  (async () => {
    try {
      for await (const frame of sseFrames(res.body)) {
        const ev = normalizeEvent(frame);
        // When it reached this process, on the wall clock (ms since the epoch, sub-ms).
        ev.at = performance.timeOrigin + performance.now();
        events.push(ev);
        if (ev.type === 'server.connected') connected();
        for (const w of [...waiters]) w.check(ev);
      }
      ended = new Error('event stream ended');
    } catch (err) {
      ended = ac.signal.aborted ? new Error('event stream closed') : err;
    }
    connected();
    for (const w of [...waiters]) w.fail(ended);
  })();

  const timer = new Promise((_, reject) => {
    const t = setTimeout(() => reject(new Error(`no server.connected on ${path} within ${timeoutMs} ms`)), timeoutMs);
    connectedP.then(() => clearTimeout(t));
  });
  await Promise.race([connectedP, timer]);
  if (ended && !events.some((e) => e.type === 'server.connected')) throw ended;
  await untilLive();

  /** Asks a toast every 50 ms until a frame other than `server.connected` arrives. */
  async function untilLive() {
    const deadline = Date.now() + timeoutMs;
    // The same directory as the stream (`/event?directory=D` hears only D's events).
    const query = path.includes('?') ? path.slice(path.indexOf('?')) : '';
    while (!ended && !events.some((e) => e.type !== 'server.connected')) {
      if (Date.now() > deadline) throw new Error(`${path} sent nothing after server.connected within ${timeoutMs} ms`);
      await fetch(`${baseUrl}/tui/show-toast${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ message: 'test event stream check', variant: 'info' }),
      }).then((r) => r.body?.cancel()).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  function waitFor(pred, { timeoutMs: wait = 30_000, from = 0, what = 'event' } = {}) {
    for (let i = from; i < events.length; i++) if (pred(events[i])) return Promise.resolve(events[i]);
    if (ended) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      const w = {
        check(ev) { if (pred(ev)) { done(); resolve(ev); } },
        fail(err) { done(); reject(err); },
      };
      const t = setTimeout(() => {
        done();
        const seen = events.slice(-15).map((e) => e.type).join(', ');
        reject(new Error(`timed out after ${wait} ms waiting for ${what}; last events: ${seen}`));
      }, wait);
      function done() { clearTimeout(t); waiters.delete(w); }
      waiters.add(w);
    });
  }

  return {
    events,
    waitFor,
    /** Wait for `session.idle` of a session (the turn-finished signal). */
    waitForIdle(sessionID, opts = {}) {
      return waitFor(
        (e) => e.type === 'session.idle' && e.properties.sessionID === sessionID,
        { what: `session.idle of ${sessionID}`, ...opts },
      );
    },
    /** Events of one session, in order. */
    ofSession(sessionID) {
      return events.filter((e) => e.properties?.sessionID === sessionID);
    },
    close() { ac.abort(); },
  };
}
