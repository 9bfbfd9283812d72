// Unit test of the scripted model server (no OpenCode needed; ~1 s).
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { sseFrames } from './events.mjs';
import { expectedReply, startModelServer, TITLE_REPLY } from './model-server.mjs';

let ms;
before(async () => { ms = await startModelServer(); });
after(async () => { await ms?.close(); });
beforeEach(() => ms.reset());

const chat = (body, init = {}) => fetch(`${ms.url}/v1/chat/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'fake-model', ...body }),
  ...init,
});
const user = (text) => ({ messages: [{ role: 'system', content: 'You are opencode' }, { role: 'user', content: text }] });

/** Read a streamed reply: the chunks' content joined, plus the frames. */
async function readStream(res) {
  const frames = [];
  const decoder = new TextDecoder();
  let raw = '';
  for await (const c of res.body) raw += decoder.decode(c, { stream: true });
  for (const block of raw.split('\n\n').filter(Boolean)) frames.push(block.replace(/^data: /, ''));
  assert.equal(frames.at(-1), '[DONE]');
  const chunks = frames.slice(0, -1).map((f) => JSON.parse(f));
  const text = chunks.map((c) => c.choices[0].delta.content ?? '').join('');
  return { chunks, text };
}

test('streams the deterministic reply as chat.completion.chunk frames', async () => {
  const res = await chat({ ...user('hello there'), stream: true });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const { chunks, text } = await readStream(res);
  assert.equal(text, 'FAKE-REPLY: hello there');
  assert.equal(text, expectedReply('hello there'));
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.ok(chunks.filter((c) => c.choices[0].delta.content).length >= 3, 'content split into several chunks');
  const last = chunks.at(-1);
  assert.equal(last.choices[0].finish_reason, 'stop');
  assert.ok(last.usage.total_tokens > 0);
  assert.equal(ms.requests.length, 1);
  assert.equal(ms.requests[0].kind, 'chat');
  assert.deepEqual(ms.requests[0].messages, user('hello there').messages);
});

test('non-stream requests get a chat.completion; multi-part user text is joined', async () => {
  const long = 'x'.repeat(100);
  const res = await chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a\nb' }, { type: 'text', text: long }] }] });
  const body = await res.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0].message.content, 'FAKE-REPLY: ' + ('a b ' + long).slice(0, 60));
  assert.equal(body.choices[0].finish_reason, 'stop');
});

test('script queue: text, status, chunkDelayMs, and reset of the queue', async () => {
  ms.script([{ text: 'first scripted' }, { status: 500 }, { text: 'slow one', chunkDelayMs: 60 }]);
  assert.equal(await readStream(await chat({ ...user('q'), stream: true })).then((r) => r.text), 'first scripted');
  const failed = await chat({ ...user('q'), stream: true });
  assert.equal(failed.status, 500);
  assert.ok((await failed.json()).error.message);
  const t0 = Date.now();
  assert.equal((await readStream(await chat({ ...user('q'), stream: true }))).text, 'slow one');
  assert.ok(Date.now() - t0 >= 100, 'chunkDelayMs slows the stream');
  assert.equal((await readStream(await chat({ ...user('q'), stream: true }))).text, 'FAKE-REPLY: q', 'queue empty again');

  // Over HTTP, too.
  await fetch(`${ms.url}/__script`, { method: 'POST', body: JSON.stringify([{ text: 'via http' }]) });
  assert.equal((await readStream(await chat({ ...user('q'), stream: true }))).text, 'via http');
  const recorded = await (await fetch(`${ms.url}/__requests`)).json();
  assert.equal(recorded.length, 5);
  await fetch(`${ms.url}/__reset`, { method: 'POST' });
  assert.equal(ms.requests.length, 0);
});

test('title requests get "Test session", are flagged, and do not consume the queue', async () => {
  ms.script(['for the chat']);
  const res = await chat({
    stream: true,
    messages: [
      { role: 'system', content: 'You are a title generator. You output ONLY a thread title. Nothing else.' },
      { role: 'user', content: 'Generate a title for this conversation:\n' },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ],
  });
  assert.equal((await readStream(res)).text, TITLE_REPLY);
  assert.equal((await readStream(await chat({ ...user('q'), stream: true }))).text, 'for the chat');
  assert.deepEqual(ms.requests.map((r) => r.kind), ['title', 'chat']);
  assert.equal(ms.titleRequests().length, 1);
  assert.equal(ms.chatRequests().length, 1);
});

test('hang never answers until reset', async () => {
  ms.script([{ hang: true }]);
  const p = chat({ ...user('q'), stream: true }).then((r) => r.text()).then(() => 'answered', () => 'dropped');
  const raced = await Promise.race([p, new Promise((r) => setTimeout(() => r('still hanging'), 300))]);
  assert.equal(raced, 'still hanging');
  ms.reset();
  assert.equal(await p, 'dropped');
});

test('GET /v1/models lists fake-model', async () => {
  const body = await (await fetch(`${ms.url}/v1/models`)).json();
  assert.deepEqual(body.data.map((m) => m.id), ['fake-model']);
});

test('sseFrames parses data frames', async () => {
  async function* gen() { yield new TextEncoder().encode('data: {"a":1}\n\ndata: {"b"'); yield new TextEncoder().encode(':2}\r\n\r\n'); }
  const out = [];
  for await (const f of sseFrames(gen())) out.push(f);
  assert.deepEqual(out, [{ a: 1 }, { b: 2 }]);
});

test('a scripted tool call streams as tool_calls with finish_reason tool_calls', async () => {
  ms.script([{ tool: 'write', args: { filePath: 'a.txt', content: 'x' } }, { tools: [{ name: 'bash', args: { command: 'ls' } }, { name: 'read', args: { filePath: 'a.txt' } }] }]);
  const { chunks, text } = await readStream(await chat({ ...user('q'), stream: true }));
  assert.equal(text, '', 'no text beside the call');
  const calls = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
  assert.equal(calls.length, 1);
  assert.equal(calls[0].function.name, 'write');
  assert.deepEqual(JSON.parse(calls[0].function.arguments), { filePath: 'a.txt', content: 'x' });
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
  const body = await (await chat(user('q'))).json();
  const both = body.choices[0].message.tool_calls;
  assert.deepEqual(both.map((c) => c.function.name), ['bash', 'read']);
  assert.notEqual(both[0].id, both[1].id, 'ids are unique');
  assert.equal(body.choices[0].finish_reason, 'tool_calls');
});
