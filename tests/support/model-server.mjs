// A scripted OpenAI-compatible model server for tests.
//
// OpenCode is pointed at it through a provider using `@ai-sdk/openai-compatible`
// (see opencode.mjs). Every request body is recorded so tests can assert on what the
// server sent the model (system prompt, visible and synthetic user parts, tools).
//
// Routes:
//   POST /v1/chat/completions  stream:true -> SSE chat.completion.chunk frames, else chat.completion
//   GET  /v1/models            one model, "fake-model"
//   GET  /__requests           JSON array of recorded requests
//   POST /__reset              clear recorded requests and the script queue, release hung requests
//   POST /__script             JSON array of replies appended to the queue
//
// A scripted reply: {text?, tool?, args?, tools?, delayMs?, chunkDelayMs?, chunks?, status?, hang?}
//   text          reply text (default: the deterministic reply below; with a tool call: none)
//   tool, args    answer with one tool call: the tool's name and its arguments object
//                 (e.g. {tool: 'write', args: {filePath, content}}); OpenCode runs the tool and
//                 asks again with its result, which takes the next scripted reply
//   tools         several tool calls in one answer: [{name, args}, ...]
//   delayMs       wait before answering
//   chunkDelayMs  wait between streamed chunks (slow streaming)
//   chunks        how many chunks the text streams in (default 4; a long stream for benchmarks)
//   status        answer with this HTTP status and an OpenAI-style error body (e.g. 500)
//   hang          never answer (until reset() or close())
// With an empty queue the reply is "FAKE-REPLY: " + first 60 chars of the last user message.
// Title requests (OpenCode's small_model call that names a session) always get "Test session",
// never consume the queue, and are recorded with kind "title".
//
// CLI: `node support/model-server.mjs [--port N]` prints the URL and runs until killed.

import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { onCleanup } from './cleanup.mjs';

export const TITLE_REPLY = 'Test session';
export const DEFAULT_PREFIX = 'FAKE-REPLY: ';

/** Text of an OpenAI message `content` (string, or array of parts joined by newlines). */
export function contentText(content) {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === 'string' ? p : p && typeof p.text === 'string' ? p.text : ''))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

/** Text of the last user message of a chat request (all its text parts joined). */
export function lastUserText(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user') return contentText(messages[i].content);
  }
  return '';
}

/**
 * The deterministic reply to a user text: "FAKE-REPLY: " + its first 60 characters, with runs
 * of whitespace (including the newline between several text parts) collapsed to one space.
 * OpenCode sends a prompt's text parts (visible and synthetic) as one user message with a
 * content array, so the reply to `[visible "hi", synthetic "ctx"]` is "FAKE-REPLY: hi ctx".
 */
export function expectedReply(userText) {
  return DEFAULT_PREFIX + String(userText).replace(/\s+/g, ' ').trim().slice(0, 60);
}

/** The deterministic reply for a request when nothing is scripted. */
export function defaultReply(body) {
  return expectedReply(lastUserText(body));
}

/**
 * Is this OpenCode's session-title request? OpenCode 1.18 sends the small_model a system
 * prompt starting "You are a title generator. You output ONLY a thread title." with no tools,
 * and the user's first message wrapped as "Generate a title for this conversation:".
 */
export function isTitleRequest(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const system = messages
    .filter((m) => m?.role === 'system')
    .map((m) => contentText(m.content))
    .join('\n');
  if (/title generator/i.test(system)) return true;
  if (/\bthread title\b/i.test(system)) return true;
  const user = messages.filter((m) => m?.role === 'user').map((m) => contentText(m.content)).join('\n');
  return /generate a title for this conversation/i.test(user);
}

/** Split text into `n` roughly equal chunks (at least one, never empty unless text is). */
function splitChunks(text, n = 4) {
  if (!text) return [''];
  const size = Math.max(1, Math.ceil(text.length / n));
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * The OpenAI `tool_calls` of a scripted reply: `{tool, args}` gives one, `{tools: [{name, args}]}`
 * several. Ids are unique per request so OpenCode can pair each result with its call.
 */
export function toolCalls(reply, seq) {
  const list = Array.isArray(reply.tools) ? reply.tools : reply.tool ? [{ name: reply.tool, args: reply.args }] : [];
  return list.map((call, i) => ({
    id: `call_fake_${seq}_${i}`,
    type: 'function',
    function: { name: String(call.name), arguments: JSON.stringify(call.args ?? {}) },
  }));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Start the model server on 127.0.0.1.
 * @returns {Promise<{url: string, port: number, requests: object[], script: (replies: object[]) => void,
 *   reset: () => void, close: () => Promise<void>, chatRequests: () => object[], titleRequests: () => object[]}>}
 */
export async function startModelServer({ port = 0, model = 'fake-model' } = {}) {
  const requests = [];
  const queue = [];
  /** Requests that are hanging or sleeping: released on reset/close. */
  const pending = new Set();
  let seq = 0;

  const server = http.createServer(async (req, res) => {
    try {
      await handle(req, res);
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err?.stack || err) } });
      else res.destroy();
    }
  });
  server.keepAliveTimeout = 1000;

  async function wait(ms, res) {
    if (!ms) return true;
    return new Promise((resolve) => {
      const entry = { res, release: () => { clearTimeout(t); resolve(false); } };
      const t = setTimeout(() => { pending.delete(entry); resolve(true); }, ms);
      pending.add(entry);
    });
  }

  async function handle(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    const path = url.pathname.replace(/\/+$/, '') || '/';

    if (req.method === 'GET' && path === '/__requests') return sendJson(res, 200, requests);
    if (req.method === 'POST' && path === '/__reset') { reset(); return sendJson(res, 200, { ok: true }); }
    if (req.method === 'POST' && path === '/__script') {
      const raw = await readBody(req);
      let list;
      try { list = JSON.parse(raw || '[]'); } catch { return sendJson(res, 400, { error: 'bad JSON' }); }
      script(Array.isArray(list) ? list : [list]);
      return sendJson(res, 200, { queued: queue.length });
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'crosscheck-tests' }],
      });
    }
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      const raw = await readBody(req);
      let body;
      try { body = JSON.parse(raw); } catch { return sendJson(res, 400, { error: { message: 'bad JSON' } }); }
      const kind = isTitleRequest(body) ? 'title' : 'chat';
      const record = {
        seq: ++seq,
        kind,
        time: Date.now(),
        path,
        headers: { authorization: req.headers.authorization, 'user-agent': req.headers['user-agent'] },
        body,
        messages: body.messages,
        tools: body.tools,
        stream: !!body.stream,
        lastUserText: lastUserText(body),
      };
      requests.push(record);
      let reply;
      if (kind === 'title') reply = { text: TITLE_REPLY };
      else reply = queue.length ? queue.shift() : {};
      record.reply = reply;
      return answer(req, res, body, reply, kind);
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  }

  async function answer(req, res, body, reply, kind) {
    if (reply.hang) {
      // Never answer: keep the socket open until reset() or close().
      await new Promise((resolve) => {
        const entry = { res, release: () => { pending.delete(entry); resolve(); } };
        pending.add(entry);
        res.on('close', entry.release);
      });
      if (!res.writableEnded) res.destroy();
      return;
    }
    if (reply.delayMs && !(await wait(reply.delayMs, res))) { res.destroy(); return; }
    if (reply.status && reply.status >= 400) {
      return sendJson(res, reply.status, {
        error: { message: reply.text ?? `scripted error ${reply.status}`, type: 'server_error', code: reply.status },
      });
    }
    const calls = toolCalls(reply, seq);
    const text = reply.text ?? (calls.length ? '' : kind === 'title' ? TITLE_REPLY : defaultReply(body));
    const finishReason = calls.length ? 'tool_calls' : 'stop';
    const id = `chatcmpl-fake-${seq}`;
    const created = Math.floor(Date.now() / 1000);
    const modelName = body.model || model;
    const promptTokens = Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4));
    const completionTokens = Math.max(1, Math.ceil((text.length + JSON.stringify(calls).length) / 4));
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };

    if (!body.stream) {
      return sendJson(res, 200, {
        id, object: 'chat.completion', created, model: modelName,
        choices: [{
          index: 0,
          message: { role: 'assistant', content: text, ...(calls.length ? { tool_calls: calls } : {}) },
          finish_reason: finishReason,
        }],
        usage,
      });
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const frame = (delta, finish = null, extra = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: modelName,
        choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    res.write(frame({ role: 'assistant', content: '' }));
    if (text) {
      for (const piece of splitChunks(text, Math.min(reply.chunks ?? 4, text.length || 1))) {
        if (reply.chunkDelayMs && !(await wait(reply.chunkDelayMs, res))) { res.destroy(); return; }
        if (res.destroyed) return;
        res.write(frame({ content: piece }));
      }
    }
    for (const [index, call] of calls.entries()) {
      if (reply.chunkDelayMs && !(await wait(reply.chunkDelayMs, res))) { res.destroy(); return; }
      if (res.destroyed) return;
      res.write(frame({ tool_calls: [{ index, ...call }] }));
    }
    res.write(frame({}, finishReason, { usage }));
    res.write('data: [DONE]\n\n');
    res.end();
  }

  function script(replies) {
    for (const r of Array.isArray(replies) ? replies : [replies]) {
      queue.push(typeof r === 'string' ? { text: r } : { ...r });
    }
  }

  function reset() {
    requests.length = 0;
    queue.length = 0;
    seq = 0;
    for (const entry of [...pending]) { pending.delete(entry); entry.release(); }
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  const actualPort = server.address().port;
  const url = `http://127.0.0.1:${actualPort}`;

  let closed = false;
  const unregister = onCleanup(() => close());
  async function close() {
    if (closed) return;
    closed = true;
    unregister();
    for (const entry of [...pending]) { pending.delete(entry); entry.release(); }
    await new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    });
  }

  return {
    url,
    baseURL: `${url}/v1`,
    port: actualPort,
    requests,
    script,
    reset,
    close,
    queueLength: () => queue.length,
    chatRequests: () => requests.filter((r) => r.kind === 'chat'),
    titleRequests: () => requests.filter((r) => r.kind === 'title'),
  };
}

// CLI
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.PORT || 0);
  const srv = await startModelServer({ port });
  console.log(srv.url);
  const stop = async () => { await srv.close(); process.exit(0); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
