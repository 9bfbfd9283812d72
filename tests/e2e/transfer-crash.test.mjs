// A transfer lost in a crash (issue 20.3) against the real `opencode serve`: `crosscheck serve`
// is SIGKILLed after the click and before OpenCode accepted the prompt (a small proxy in front of
// OpenCode holds that one request, as a slow server would). After the restart the message is not
// marked sent, nothing reached the implementer, and the next click is a first send that arrives
// once.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 60_000;
const HANDOFF = 'HANDOFF: greet() takes a name now.';
const REVIEW = 'REVIEW: greet("") panics; add a guard.';
const FEEDBACK_HEAD = 'Another agent reviewed your changes and left the feedback below.';

let ms;
let oc;
let proxy;
let cc;

/**
 * Forwards every request to `target`, except that while `hold` names a session, its
 * `prompt_async` requests are held: never forwarded, never answered.
 */
function startProxy(target) {
  const upstream = new URL(target);
  const state = { hold: null, held: [] };
  const server = http.createServer((req, res) => {
    if (state.hold && req.method === 'POST' && req.url.startsWith(`/session/${state.hold}/prompt_async`)) {
      state.held.push(res);
      return;
    }
    const out = http.request({
      host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers,
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        state,
        close: () => new Promise((done) => { server.closeAllConnections(); server.close(() => done()); }),
      });
    });
  });
}

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.baseURL, password: PASSWORD });
  proxy = await startProxy(oc.url);
  cc = await startCrosscheck({ opencodeUrl: proxy.url, password: PASSWORD });
});

after(async () => {
  await cc?.stop();
  await proxy?.close();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);
const userTexts = async (sessionId) => (await oc.json(`/session/${sessionId}/message`))
  .filter((m) => m.info.role === 'user')
  .map((m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join(''));

test('a transfer whose process was killed before OpenCode accepted it is not marked sent', { timeout: 5 * 60_000 }, async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Greet by name' } });
  ms.script([{ text: HANDOFF }, { text: REVIEW }, { text: 'Guarded the empty name.' }]);
  await until(async () => (await cc.api({ cmd: 'snapshot' })).sessions.some((s) => s.id === original.id), 'crosscheck sees the session');
  const flow = await cc.api({ cmd: 'startHandoffReview', sessionId: original.id });
  const done = await until(async () => {
    const f = (await cc.api({ cmd: 'snapshot' })).flows.find((x) => x.id === flow.id);
    return f && ['done', 'failed', 'cancelled'].includes(f.step) ? f : null;
  }, 'the handoff to end');
  assert.equal(done.step, 'done', JSON.stringify(done.error));
  const review = done.reviewSessionId;
  const reply = await until(async () => {
    const messages = await oc.json(`/session/${review}/message`);
    const m = messages.find((x) => x.info.role === 'assistant' && x.info.time?.completed
      && x.parts.some((p) => p.type === 'text' && p.text.includes('REVIEW:')));
    return m?.info.id ?? null;
  }, 'the reviewer\'s reply');
  assert.equal((await userTexts(original.id)).length, 1, 'the handoff request only');

  // The click; OpenCode does not accept it before the process dies.
  proxy.state.hold = original.id;
  const click = cc.api({ cmd: 'transfer', sessionId: review, messageId: reply }).catch((e) => e);
  await until(async () => proxy.state.held.length === 1, 'the transfer to reach the server');
  const { dataDir, configDir } = cc;
  process.kill(-cc.pid, 'SIGKILL');
  await click;
  proxy.state.hold = null;
  for (const res of proxy.state.held) res.destroy();

  cc = await startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD, dataDir, configDir });
  await until(async () => (await cc.api({ cmd: 'snapshot' })).connection.state === 'ready', 'the restarted crosscheck to be ready');
  assert.equal((await userTexts(original.id)).length, 1, 'nothing reached the implementer');
  const marks = await cc.api({ cmd: 'listTransfers', sessionId: review });
  assert.ok(marks.every((m) => m.pending), `no Sent mark for a send that never arrived: ${JSON.stringify(marks)}`);

  // The next click is a first send (no "Send again?"), and it arrives once.
  await cc.api({ cmd: 'transfer', sessionId: review, messageId: reply });
  const sent = await cc.api({ cmd: 'listTransfers', sessionId: review });
  assert.equal(sent.length, 1, JSON.stringify(sent));
  assert.equal(sent[0].pending, false);
  const texts = await until(async () => {
    const t = await userTexts(original.id);
    return t.length === 2 ? t : null;
  }, 'the feedback in the implementing session');
  assert.ok(texts[1].startsWith(FEEDBACK_HEAD), texts[1]);
  assert.ok(texts[1].includes(REVIEW));
});
