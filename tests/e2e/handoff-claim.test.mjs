// Issue 20.6: two `crosscheck serve` processes, each with its own data folder (so nothing but the
// OpenCode server is shared), attached to one real `opencode serve`, start the handoff of the
// same implementer session at the same moment, five times. Checked through OpenCode's own API:
// the implementer received the handoff request once and the review session the review prompt
// once; both flows end done on the same review session (the one that lost the claim followed the
// other), no claim is left in the session's metadata, and the process that lost says so in its
// log and opened the review's tab all the same. The same holds for a review loop: of two
// processes starting one pair's loop, the one whose claim stands runs it; the other's stops at
// once, sending nothing, and says another Crosscheck runs it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { sleep, until as untilCondition } from '../support/page.mjs';

const PASSWORD = 'e2e-secret';
const WAIT = 90_000;
const TRIALS = 5;
const HANDOFF_VISIBLE = 'Prepare a handoff for another agent to review this work.';
const REVIEW_HEAD = 'Please review the changes described in this handoff.';

let ms;
let oc;
let first;
let second;

before(async () => {
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url, password: PASSWORD });
  // Info logs from the flows say which process followed the other.
  const env = { CROSSCHECK_LOG: 'warn,crosscheck_core::flows=info' };
  [first, second] = await Promise.all([
    startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD, env }),
    startCrosscheck({ opencodeUrl: oc.url, password: PASSWORD, env }),
  ]);
  assert.notEqual(first.dataDir, second.dataDir, 'each process has its own database');
  // Both have listed the server's sessions before the trials make theirs (what this file tests is
  // the race between two handoffs, not a session made while a process is still attaching).
  for (const cc of [first, second]) {
    await untilCondition(async () => (await cc.api({ cmd: 'snapshot' })).connection?.state === 'ready', `${cc.base} ready`, 60_000);
  }
});

after(async () => {
  await first?.stop();
  await second?.stop();
  await oc?.dispose();
  await ms?.close();
});

const until = (probe, what, timeoutMs = WAIT) => untilCondition(probe, what, timeoutMs);

/** The visible text of a stored message. */
const textOf = (m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic).map((p) => p.text).join('\n');

/** The user messages of a session, as OpenCode stores them. */
async function userMessages(sessionId) {
  return (await oc.json(`/session/${sessionId}/message`)).filter((m) => m.info.role === 'user');
}

/** How many times a process logged that it followed another's handoff. */
const followed = (cc) => cc.output().split('another process runs this handoff').length - 1;

test('two processes starting the same handoff at once send it to the implementer once and the review once, five times', { timeout: 15 * 60_000 }, async () => {
  for (let trial = 1; trial <= TRIALS; trial++) {
    const original = await oc.json('/session', { method: 'POST', body: { title: `Claimed ${trial}`, metadata: { ticket: trial } } });
    for (const cc of [first, second]) {
      await until(async () => (await cc.api({ cmd: 'snapshot' })).sessions.some((s) => s.id === original.id), `process sees ${original.id}`);
    }
    const followedBefore = followed(first) + followed(second);
    const t0 = Date.now();
    const started = await Promise.all([first, second].map((cc) => cc.api({ cmd: 'startHandoffReview', sessionId: original.id })));
    const ends = await Promise.all([[first, started[0]], [second, started[1]]].map(([cc, flow]) => until(async () => {
      const f = (await cc.api({ cmd: 'snapshot' })).flows.find((x) => x.id === flow.id);
      return f?.ended ? f : null;
    }, `trial ${trial}: flow ${flow.id} to end`)));
    const took = Date.now() - t0;
    // Let a late second request land before counting.
    await sleep(1500);

    const asked = await userMessages(original.id);
    assert.equal(asked.length, 1, `trial ${trial}: the implementer received the handoff request once: ${asked.map(textOf).join(' | ')}`);
    assert.equal(textOf(asked[0]), HANDOFF_VISIBLE);

    for (const f of ends) {
      assert.equal(f.step, 'done', `trial ${trial}: ${JSON.stringify(f)}`);
      assert.equal(f.error ?? null, null, `trial ${trial}: no error left: ${JSON.stringify(f.error)}`);
    }
    assert.equal(ends[0].reviewSessionId, ends[1].reviewSessionId, `trial ${trial}: both show one review session`);
    const review = ends[0].reviewSessionId;
    const reviews = (await oc.json('/session')).filter((s) => s.metadata?.openchamber?.originalSessionID === original.id);
    assert.deepEqual(reviews.map((s) => s.id), [review], `trial ${trial}: one review session`);
    const prompts = await userMessages(review);
    assert.equal(prompts.length, 1, `trial ${trial}: the review session received the review prompt once`);
    assert.ok(textOf(prompts[0]).startsWith(REVIEW_HEAD), textOf(prompts[0]));
    // No claim is left behind; unrelated keys are kept.
    assert.deepEqual((await oc.json(`/session/${original.id}`)).metadata, { ticket: trial, openchamber: { reviewSessionID: review } });
    // The process that lost the claim followed the other (said so) and shows the review tab too.
    assert.equal(followed(first) + followed(second) - followedBefore, 1, `trial ${trial}: exactly one process followed the other`);
    for (const cc of [first, second]) {
      const tabs = (await cc.api({ cmd: 'snapshot' })).tabs;
      assert.ok(JSON.stringify(tabs).includes(review), `trial ${trial}: the review's tab is open in ${cc.base}`);
    }
    console.log(`TIMING trial ${trial}: both flows ended in ${took} ms`);
  }
});

/** The pair's loop as process `cc` knows it, once `pred` holds. */
const loopIn = (cc, original, pred, what) => until(async () => {
  const loops = await cc.api({ cmd: 'listLoops' });
  return loops.find((l) => l.originalSessionId === original && pred(l)) ?? null;
}, what);

test('of two processes starting one pair\'s review loop, one runs it and the other sends nothing', { timeout: 5 * 60_000 }, async () => {
  const original = await oc.json('/session', { method: 'POST', body: { title: 'Looped once' } });
  for (const cc of [first, second]) {
    await until(async () => (await cc.api({ cmd: 'snapshot' })).sessions.some((s) => s.id === original.id), `process sees ${original.id}`);
  }
  // The handoff's reply, then a review that takes a while: the first process's loop waits on it.
  ms.script([{ text: 'The handoff.' }, { text: 'Looking at it. FINDINGS VERDICT: CLEAN', chunks: 40, chunkDelayMs: 150 }]);
  const flow = await first.api({ cmd: 'startHandoffReview', sessionId: original.id, reviewLoop: { maxRounds: 2 } });
  const running = await loopIn(first, original.id, (l) => !l.ended, 'the first process to run the loop');
  const review = running.reviewSessionId;
  await until(async () => (await second.api({ cmd: 'snapshot' })).sessions.some((s) => s.id === review), 'the second process to list the review');
  // The claim is on the server, under the loop's id.
  await until(async () => (await oc.json(`/session/${original.id}`)).metadata?.crosscheck?.claims?.reviewLoop?.token === running.id, 'the loop claim on the server');

  await second.api({ cmd: 'startLoop', sessionId: review, maxRounds: 2 });
  const stopped = await loopIn(second, original.id, (l) => l.ended, 'the second process\'s loop to stop');
  assert.equal(stopped.stop?.reason, 'runsElsewhere', JSON.stringify(stopped.stop));
  const stillRunning = (await first.api({ cmd: 'listLoops' })).find((l) => l.id === running.id);
  assert.equal(stillRunning?.ended, false, 'the first process\'s loop runs on');
  assert.equal((await userMessages(review)).length, 1, 'the review session got the first review only');
  assert.equal((await userMessages(original.id)).length, 1, 'the implementer got the handoff only');

  // The first loop ends (the review says CLEAN) and its claim goes with it.
  const ended = await loopIn(first, original.id, (l) => l.ended, 'the first loop to end');
  assert.ok(ended.stop, JSON.stringify(ended));
  await until(async () => !(await oc.json(`/session/${original.id}`)).metadata?.crosscheck?.claims?.reviewLoop, 'the loop claim to be released');
  const f = (await first.api({ cmd: 'snapshot' })).flows.find((x) => x.id === flow.id);
  assert.ok(f, 'the handoff is listed');
});
