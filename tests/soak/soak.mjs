// Soak: scripted traffic against the real `opencode serve` and `crosscheck serve` for a while
// (30 minutes unless SOAK_MINUTES says otherwise): SOAK_SESSIONS sessions (20) get streaming
// replies, simulated UI views (each with its own client id and event stream, as a browser tab)
// open and close transcripts and sometimes reload, and OpenCode is restarted SOAK_RESTARTS
// times (5; every other one with SIGKILL). Prints the backend's memory (RSS) and what it keeps
// (sessions, followed transcripts, followers, connections) at the start and the end, and fails
// on a session stuck busy or a transcript that differs from the server's.
//
// Run: make soak   (or: cd tests && SOAK_MINUTES=3 node soak/soak.mjs)
import fs from 'node:fs';
import { isAlive, signalChild, cleanupAll } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startOpencode } from '../support/opencode.mjs';
import { sleep, until } from '../support/page.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 20);
const RESTARTS = Number(process.env.SOAK_RESTARTS ?? 5);
const VIEWS = Number(process.env.SOAK_VIEWS ?? 4);
const DURATION_MS = MINUTES * 60_000;

const log = (...args) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}]`, ...args);
const pick = (list) => list[Math.floor(Math.random() * list.length)];

let ms;
let oc;
let cc;

/** One Api call to the backend as `client`. */
async function call(request, client) {
  const res = await fetch(`${cc.base}/api`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${cc.token}`,
      ...(client ? { 'x-crosscheck-client': client } : {}),
    },
    body: JSON.stringify(request),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${request.cmd} -> ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

async function stats() {
  const res = await fetch(`${cc.base}/api/stats`, { headers: { authorization: `Bearer ${cc.token}` } });
  return res.json();
}

/** The backend's resident memory in MiB. */
function rssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

async function figures(label) {
  const s = await stats();
  log(`${label}: backend RSS ${rssMiB(cc.pid)} MiB; sessions ${s.sessions}, followed transcripts ${s.transcripts}, followers ${s.followers}, connections ${s.connections}`);
  return s;
}

/** A simulated UI view: an event stream under its own client id, and the sessions it shows. */
class View {
  constructor(name) {
    this.name = name;
    this.generation = 0;
    this.open = new Set();
    this.connect();
  }

  get client() { return `${this.name}-${this.generation}`; }

  connect() {
    this.abort = new AbortController();
    const client = this.client;
    fetch(`${cc.base}/api/events?client=${client}`, {
      headers: { authorization: `Bearer ${cc.token}` },
      signal: this.abort.signal,
    }).then(async (res) => {
      // Read and drop the batches; the backend only needs the stream to stay open.
      for await (const _ of res.body) { /* keep reading */ }
    }).catch(() => undefined);
  }

  /** A page reload: the old stream goes without closing anything, a new client comes. */
  reload() {
    this.abort.abort();
    this.generation += 1;
    this.open.clear();
    this.connect();
  }

  close() { this.abort.abort(); this.open.clear(); }

  async show(sessionId) {
    await call({ cmd: 'openSession', sessionId }, this.client);
    this.open.add(sessionId);
  }

  async hide(sessionId) {
    await call({ cmd: 'closeSession', sessionId }, this.client);
    this.open.delete(sessionId);
  }
}

/** Assistant texts of a transcript, oldest first. */
function assistantTexts(messages) {
  return messages
    .filter((m) => m.info.role === 'assistant')
    .map((m) => m.parts.filter((p) => p.type === 'text' && !p.synthetic && !p.ignored).map((p) => p.text ?? '').join(''));
}

let counter = 0;
function replyText() {
  counter += 1;
  return Array.from({ length: 24 }, (_, i) => `r${counter}w${i}`).join(' ');
}

async function main() {
  const started = Date.now();
  log(`${MINUTES} min, ${SESSIONS} sessions, ${VIEWS} views, ${RESTARTS} OpenCode restarts`);
  ms = await startModelServer();
  oc = await startOpencode({ modelUrl: ms.url });
  cc = await startCrosscheck({ opencodeUrl: oc.url });
  const sessions = [];
  for (let i = 0; i < SESSIONS; i += 1) {
    sessions.push((await oc.json('/session', { method: 'POST', body: { title: `Soak ${i + 1}` } })).id);
  }
  await until(async () => (await stats()).sessions >= SESSIONS, 'the backend to list the sessions', 30_000);
  const views = Array.from({ length: VIEWS }, (_, i) => new View(`view${i}`));
  await sleep(500);
  const start = await figures('start');

  const restartAt = Array.from({ length: RESTARTS }, (_, i) => started + ((i + 1) * DURATION_MS) / (RESTARTS + 1));
  let restarts = 0;
  let prompts = 0;
  let errors = 0;
  const end = started + DURATION_MS;
  while (Date.now() < end) {
    if (restarts < RESTARTS && Date.now() >= restartAt[restarts]) {
      restarts += 1;
      const kill = restarts % 2 === 1;
      log(`restart ${restarts}/${RESTARTS} of OpenCode (${kill ? 'SIGKILL' : 'graceful'})`);
      if (kill) {
        const pid = oc.pid;
        signalChild(pid, 'SIGKILL');
        await until(async () => !isAlive(pid), 'OpenCode to die', 10_000);
        await sleep(200);
      }
      ms.reset();
      await oc.restart();
    }
    try {
      const action = Math.random();
      if (action < 0.35) {
        // A streaming reply in a session.
        ms.script([{ text: replyText(), chunkDelayMs: 300 }]);
        await call({ cmd: 'sendPrompt', sessionId: pick(sessions), text: `Soak prompt ${prompts}` });
        prompts += 1;
      } else if (action < 0.7) {
        await pick(views).show(pick(sessions));
      } else if (action < 0.92) {
        const view = pick(views);
        const shown = [...view.open];
        if (shown.length) await view.hide(pick(shown));
      } else {
        pick(views).reload();
      }
    } catch (err) {
      // Requests fail while OpenCode restarts; that is expected traffic, not a soak failure.
      errors += 1;
      if (errors % 20 === 1) log(`request failed (${errors} so far): ${err.message.slice(0, 160)}`);
    }
    await sleep(400 + Math.random() * 800);
  }

  log(`traffic done: ${prompts} prompts, ${restarts} restarts, ${errors} failed requests`);
  // Let every turn end (a turn cut off by a SIGKILL is over on the server).
  await until(async () => Object.keys(await oc.json('/session/status')).length === 0, 'the server idle', 120_000);
  const failures = [];
  // No session stuck busy in the backend once the server is idle.
  try {
    await until(async () => Object.keys((await call({ cmd: 'snapshot' })).statuses).length === 0, 'no session busy in the backend', 30_000);
  } catch {
    const stuck = Object.keys((await call({ cmd: 'snapshot' })).statuses);
    failures.push(`stuck busy in the backend while the server is idle: ${stuck.join(', ')}`);
  }
  // Every shown transcript is the server's.
  await sleep(1000);
  for (const view of views) {
    for (const id of view.open) {
      const page = await call({ cmd: 'openSession', sessionId: id }, view.client);
      const server = await oc.json(`/session/${id}/message`);
      const ours = assistantTexts(page.messages);
      const theirs = assistantTexts(server);
      if (JSON.stringify(ours) !== JSON.stringify(theirs.slice(-ours.length || undefined))) {
        failures.push(`transcript of ${id} differs from the server's:\n  ours   ${JSON.stringify(ours).slice(0, 400)}\n  server ${JSON.stringify(theirs).slice(0, 400)}`);
      }
    }
  }
  const shown = await figures('end (views open)');
  for (const view of views) view.close();
  await until(async () => (await stats()).connections === 0, 'the closed views to be released', 30_000)
    .catch(() => failures.push('closed views were not released'));
  const closed = await figures('end (views closed)');
  if (closed.transcripts !== 0) failures.push(`${closed.transcripts} transcript(s) still followed after every view closed`);
  log(`followed transcripts: start ${start.transcripts}, end with views open ${shown.transcripts}, after closing ${closed.transcripts}`);
  if (failures.length) {
    for (const f of failures) console.error(`SOAK FAILURE: ${f}`);
    process.exitCode = 1;
  } else {
    log(`passed in ${Math.round((Date.now() - started) / 1000)} s`);
  }
}

try {
  await main();
} catch (err) {
  console.error(`SOAK FAILURE: ${err.stack ?? err}`);
  if (cc) console.error(`--- crosscheck output ---\n${cc.output().slice(-4000)}`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
