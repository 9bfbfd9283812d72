// Requests about a session on the second server go to that server, over HTTP against two real
// `opencode serve` processes (the pinned version as the main server, 1.15.13 as the second, with a
// model only it has): the transcript search finds a line that only a second-server session
// holds, and the model list of that session is the second server's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { opencodeBinOf, opencodeConfig, startOpencode } from '../support/opencode.mjs';
import { until } from '../support/page.mjs';

const WAIT = 60_000;
const LINE = 'where does the zebra parser stall on tabs';

let ms;
let main;
let second;
let cc;

before(async () => {
  ms = await startModelServer();
  // The second server offers a model the main one does not have.
  const secondConfig = opencodeConfig(ms.url);
  secondConfig.provider.fake.models = { 'second-model': { name: 'Second Model', limit: { context: 128000, output: 4096 } } };
  secondConfig.model = 'fake/second-model';
  secondConfig.small_model = 'fake/second-model';
  [main, second] = await Promise.all([
    startOpencode({ modelUrl: ms.url }),
    startOpencode({ modelUrl: ms.url, bin: opencodeBinOf('opencode-ai-1-15'), config: secondConfig }),
  ]);
  cc = await startCrosscheck({ opencodeUrl: main.url, args: ['--opencode', second.url] });
});

after(async () => {
  await cc?.stop();
  await Promise.all([main, second].map((s) => s?.dispose()));
  await ms?.close();
});

/** Reads the app's change stream until `pred(text so far)` holds; answers that text. */
async function streamUntil(pred, what) {
  const ac = new AbortController();
  const res = await fetch(`${cc.base}/api/events?token=${cc.token}`, {
    headers: { authorization: `Bearer ${cc.token}` }, signal: ac.signal,
  });
  assert.equal(res.status, 200, 'the change stream opens');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const timer = setTimeout(() => ac.abort(), WAIT);
  try {
    while (!pred(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  assert.ok(pred(text), `${what}; the stream said: ${text.slice(-2000)}`);
  return text;
}

test('a second-server session is searched on its server and offers its server\'s models', { timeout: 5 * 60_000 }, async () => {
  const session = await second.json('/session', { method: 'POST', body: { title: 'Bravo on the second server' } });
  // A real turn: the line is in the session's transcript on the second server only.
  await second.json(`/session/${session.id}/message`, { method: 'POST', body: { parts: [{ type: 'text', text: LINE }] } });
  const view = await until(async () => (await cc.api({ cmd: 'snapshot' })).sessions.find((s) => s.id === session.id), 'the app lists the second server\'s session', WAIT);
  assert.ok(view.serverId && view.serverId !== 'main', `on the second server: ${JSON.stringify(view.serverId)}`);

  // Transcript search: not held, so read from the session's own server.
  const stream = streamUntil((t) => t.includes(LINE) || t.includes('"unread":[{'), 'the search reports the line');
  await new Promise((r) => setTimeout(r, 300));
  const progress = await cc.api({ cmd: 'searchTranscripts', query: 'zebra parser' });
  const text = await stream;
  assert.ok(!progress.hits.some((h) => h.sessionId === session.id), 'the transcript was not held: it had to be read');
  assert.ok(text.includes(LINE), 'the line of the second server\'s session is found');

  // The model list of that session: the second server's.
  const catalog = await cc.api({ cmd: 'providers', sessionId: session.id });
  const models = catalog.providers.flatMap((p) => p.models.map((m) => `${p.id}/${m.id}`));
  assert.ok(models.includes('fake/second-model'), `the second server's model is offered: ${models.join(', ')}`);
  assert.ok(!models.includes('fake/fake-model'), `not the main server's: ${models.join(', ')}`);
  const mainModels = (await cc.api({ cmd: 'providers' })).providers.flatMap((p) => p.models.map((m) => `${p.id}/${m.id}`));
  assert.ok(mainModels.includes('fake/fake-model') && !mainModels.includes('fake/second-model'), mainModels.join(', '));
});
