// Self-test of the harness against a real `opencode serve` (no Crosscheck needed):
// model server + OpenCode with a password, a session with metadata, a prompt with a visible and
// a synthetic part followed on /global/event, the reply read back, a restart that keeps sessions.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { subscribeEvents } from './events.mjs';
import { expectedReply, startModelServer, TITLE_REPLY } from './model-server.mjs';
import { basicAuth, startOpencode } from './opencode.mjs';

const PASSWORD = 'harness-secret';
const METADATA = { openchamber: { reviewSessionID: 'x' }, keep: 1 };
const VISIBLE = 'Please review the parser change';
const SYNTHETIC = 'SYNTHETIC-CONTEXT: hidden review instructions';

let ms;
let oc;
let session;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  console.log(`opencode ${oc.url} ready in ${oc.startupMs} ms (pid ${oc.pid})`);
});

after(async () => {
  await oc?.dispose();
  await ms?.close();
});

test('every route wants Basic auth when a password is set', async () => {
  const anon = await fetch(`${oc.url}/global/health`);
  assert.equal(anon.status, 401);
  await anon.text();
  const wrong = await fetch(`${oc.url}/session`, { headers: { authorization: basicAuth('nope') } });
  assert.equal(wrong.status, 401);
  await wrong.text();
  const health = await oc.json('/global/health');
  assert.equal(health.healthy, true);
  assert.equal(health.version, '1.18.33');
});

test('a session keeps its metadata', async () => {
  session = await oc.json('/session', { method: 'POST', body: { metadata: METADATA } });
  assert.match(session.id, /^ses_/);
  assert.deepEqual(session.metadata, METADATA);
  assert.equal(session.directory, oc.projectDir);
  const back = await oc.json(`/session/${session.id}`);
  assert.deepEqual(back.metadata, METADATA);
});

test('a prompt with a visible and a synthetic part streams the scripted reply', async () => {
  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  try {
    const t0 = Date.now();
    const res = await oc.fetch(`/session/${session.id}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        parts: [
          { type: 'text', text: VISIBLE },
          { type: 'text', text: SYNTHETIC, synthetic: true },
        ],
      }),
    });
    assert.equal(res.status, 204);
    await res.text();
    await events.waitForIdle(session.id, { timeoutMs: 60_000 });
    console.log(`first turn done in ${Date.now() - t0} ms`);

    // The /global/event envelope: {directory, project, payload:{id,type,properties}}.
    const created = events.events.find((e) => e.type === 'session.status' && e.properties.sessionID === session.id);
    assert.equal(created.directory, oc.projectDir);
    assert.equal(typeof created.project, 'string');
    const types = events.ofSession(session.id).map((e) => e.type);
    for (const t of ['message.updated', 'message.part.updated', 'message.part.delta', 'session.status', 'session.idle']) {
      assert.ok(types.includes(t), `saw ${t}`);
    }
    const deltas = events.ofSession(session.id)
      .filter((e) => e.type === 'message.part.delta')
      .map((e) => e.properties.delta)
      .join('');
    const want = expectedReply(`${VISIBLE}\n${SYNTHETIC}`);
    assert.equal(deltas, want, 'the deltas add up to the reply');

    const messages = await oc.json(`/session/${session.id}/message`);
    assert.equal(messages.length, 2);
    const [userMsg, assistant] = messages;
    assert.equal(userMsg.info.role, 'user');
    const userTexts = userMsg.parts.filter((p) => p.type === 'text');
    assert.deepEqual(userTexts.map((p) => [p.text, !!p.synthetic]), [[VISIBLE, false], [SYNTHETIC, true]]);
    assert.equal(assistant.info.role, 'assistant');
    assert.equal(assistant.info.parentID, userMsg.info.id);
    assert.ok(assistant.info.time.completed, 'assistant message completed');
    assert.equal(assistant.info.finish, 'stop');
    const text = assistant.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert.equal(text, want);

    // What reached the model: both parts, in one user message.
    const chats = ms.chatRequests();
    assert.equal(chats.length, 1, 'one chat request');
    const sent = chats[0];
    assert.equal(sent.stream, true);
    assert.ok(sent.lastUserText.includes(VISIBLE), 'visible text reached the model');
    assert.ok(sent.lastUserText.includes(SYNTHETIC), 'synthetic text reached the model');
    assert.ok(sent.messages.some((m) => m.role === 'system'), 'system prompt sent');
    assert.ok(Array.isArray(sent.tools) && sent.tools.length > 0, 'tools sent');

    // The title call: flagged, answered with "Test session", and it names the session.
    const titles = ms.titleRequests();
    assert.equal(titles.length, 1, 'one title request');
    assert.ok(titles[0].lastUserText.includes(VISIBLE));
    assert.equal(titles[0].tools, undefined, 'title request has no tools');
    const named = await oc.json(`/session/${session.id}`);
    assert.equal(named.title, TITLE_REPLY);
    assert.deepEqual(named.metadata, METADATA, 'metadata survives the turn');
  } finally {
    events.close();
  }
});

test('sessions are listed by GET /session, with and without ?directory=', async () => {
  const projects = await oc.json('/project');
  assert.ok(projects.some((p) => p.id === session.projectID));
  const all = await oc.json('/session');
  assert.ok(all.some((s) => s.id === session.id), 'GET /session lists it');
  const inDir = await oc.json(`/session?directory=${encodeURIComponent(oc.projectDir)}`);
  assert.deepEqual(inDir.map((s) => s.id), [session.id]);
  const elsewhere = await oc.json(`/session?directory=${encodeURIComponent(oc.root)}`);
  assert.ok(!elsewhere.some((s) => s.id === session.id), '?directory= filters by exact directory');
});

test('a scripted tool call runs the tool in OpenCode, then the next reply ends the turn', async () => {
  const file = path.join(oc.projectDir, 'tool-call.txt');
  const s = await oc.json('/session', { method: 'POST', body: { title: 'tools' } });
  ms.script([
    { tool: 'write', args: { filePath: file, content: 'written by a scripted tool call\n' } },
    { text: 'done writing' },
  ]);
  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  try {
    const res = await oc.fetch(`/session/${s.id}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'write a file' }] }),
    });
    assert.equal(res.status, 204);
    await res.text();
    await events.waitForIdle(s.id, { timeoutMs: 60_000 });
  } finally {
    events.close();
  }
  assert.equal(fs.readFileSync(file, 'utf8'), 'written by a scripted tool call\n');
  const messages = await oc.json(`/session/${s.id}/message`);
  const tools = messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool');
  assert.equal(tools.length, 1, 'one tool part');
  assert.equal(tools[0].tool, 'write');
  assert.equal(tools[0].state.status, 'completed');
  const text = messages.flatMap((m) => m.parts).filter((p) => p.type === 'text').map((p) => p.text).join('');
  assert.ok(text.includes('done writing'), 'the reply after the tool result ends the turn');
  // The second model request carried the tool's result.
  const second = ms.chatRequests().at(-1);
  assert.ok(second.messages.some((m) => m.role === 'tool'), 'the tool result went back to the model');
});

test('restart keeps sessions and the server answers prompts again', async () => {
  const oldPid = oc.pid;
  const t0 = Date.now();
  await oc.restart();
  console.log(`restart took ${Date.now() - t0} ms`);
  assert.notEqual(oc.pid, oldPid);
  const all = await oc.json('/session');
  const again = all.find((s) => s.id === session.id);
  assert.ok(again, 'session still listed after restart');
  assert.deepEqual(again.metadata, METADATA);
  assert.equal((await oc.json(`/session/${session.id}/message`)).length, 2);

  ms.script([{ text: 'second turn, scripted', chunkDelayMs: 20 }]);
  const events = await subscribeEvents(oc.url, { headers: oc.authHeaders });
  try {
    const res = await oc.fetch(`/session/${session.id}/prompt_async`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'and again' }] }),
    });
    assert.equal(res.status, 204);
    await events.waitForIdle(session.id, { timeoutMs: 60_000 });
  } finally {
    events.close();
  }
  const messages = await oc.json(`/session/${session.id}/message`);
  assert.equal(messages.length, 4);
  const last = messages.at(-1);
  assert.equal(last.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''), 'second turn, scripted');
  assert.equal(ms.titleRequests().length, 1, 'no second title request for a named session');
});

test('stop() kills the server by PID', async () => {
  const pid = oc.pid;
  await oc.stop();
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
  await assert.rejects(fetch(`${oc.url}/global/health`));
});
