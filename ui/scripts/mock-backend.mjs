#!/usr/bin/env node
// A scripted stand-in for `crosscheck serve`, for working on the UI without the Rust backend:
// serves ui/dist and answers the Api (POST /api) and the change stream (GET /api/events, SSE)
// with fake sessions. Sending a prompt streams a reply; /handoff-review walks a flow.
//
//   npm run build && node scripts/mock-backend.mjs [--port 5174] [--messages 5000] [--page 100] [--token T]
//
// Listens on 127.0.0.1 only.

import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const PORT = Number(opt('port', '5174'));
const BIG = Number(opt('messages', '5000'));
const TOKEN = opt('token', '');
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

let seq = 100;
const clients = new Set();
const now = Date.now();
const dirA = '/home/dev/projects/crosscheck';
const dirB = '/home/dev/projects/website';

const sessions = new Map();
const transcripts = new Map();
const statuses = {};
const flows = [];
let tabs = [];
let activeTab;
let settings = { theme: 'system', locale: '', handoffTimeoutMs: 30 * 60 * 1000, notifications: { reviewDone: true, permission: true, loopStopped: true } };
const prompts = [
  {
    name: 'session.reviewFeedbackToImplementer.visible',
    placeholders: ['feedback'],
    defaultTemplate: 'Another agent reviewed your changes and left the feedback below.\n\nPlease review the feedback, resolve the relevant issues, and explain what you changed.\n\n{{feedback}}',
  },
  {
    name: 'session.implementationResponseToReviewer.visible',
    placeholders: ['response'],
    defaultTemplate: 'The agent implementing the changes has responded to the previous review feedback.\n\nPlease review the latest state again and report any remaining issues.\n\n{{response}}',
  },
].map((p) => ({ ...p, template: p.defaultTemplate, overridden: false }));

let idCounter = 0;
const id = (prefix) => `${prefix}_${(now + idCounter++).toString(16).padStart(14, '0')}`;

function addSession(title, directory, minutesAgo, metadata) {
  const s = {
    id: id('ses'),
    slug: title.toLowerCase().replace(/\W+/g, '-'),
    projectID: 'proj',
    directory,
    title,
    time: { created: now - minutesAgo * 60_000, updated: now - minutesAgo * 60_000 },
    ...(metadata ? { metadata } : {}),
    model: { id: 'claude-sonnet-4-5', providerID: 'anthropic' },
    agent: 'build',
  };
  sessions.set(s.id, s);
  transcripts.set(s.id, []);
  return s;
}

function text(sessionID, messageID, body, extra = {}) {
  return { id: id('prt'), sessionID, messageID, type: 'text', text: body, ...extra };
}

function push(sessionID, role, parts, extra = {}) {
  const messageID = id('msg');
  const info = { id: messageID, sessionID, role, time: { created: Date.now(), completed: Date.now() }, ...extra };
  const msg = { info, parts: parts.map((p) => ({ ...p(sessionID, messageID) })) };
  transcripts.get(sessionID).push(msg);
  return msg;
}

const sample = `Here is what I changed:

1. **Store**: changes are applied once per animation frame.
2. **Virtual list**: only visible rows are mounted.

\`\`\`ts
export function visibleRange(offsets: Float64Array, top: number, height: number) {
  return { start: indexAt(offsets, top), end: indexAt(offsets, top + height) + 1 };
}
\`\`\`

See [the docs](https://example.com/docs) for details. <script>alert('xss')</script>`;

const main = addSession('Implement the virtual list', dirA, 3);
const review = addSession('Review: Implement the virtual list', dirA, 2, {
  openchamber: { kind: 'review', originalSessionID: main.id },
});
main.metadata = { openchamber: { reviewSessionID: review.id } };
// The backend resolves review links for the UI.
main.link = { kind: 'original', otherSessionId: review.id, otherExists: true };
review.link = { kind: 'review', otherSessionId: main.id, otherExists: true };
const big = addSession(`Long session (${BIG} messages)`, dirA, 60);
addSession('Fix the landing page', dirB, 60 * 26);
addSession('Old experiment', dirB, 60 * 24 * 40).time.archived = now - 1000;

push(main.id, 'user', [(s, m) => text(s, m, 'Please implement a virtual list for the transcript.')], {
  model: { providerID: 'anthropic', modelID: 'claude-sonnet-4-5' },
  agent: 'build',
});
push(
  main.id,
  'assistant',
  [
    (s, m) => ({ id: id('prt'), sessionID: s, messageID: m, type: 'step-start' }),
    (s, m) => ({ id: id('prt'), sessionID: s, messageID: m, type: 'reasoning', text: 'Thinking about offsets and anchors.' }),
    (s, m) => ({
      id: id('prt'),
      sessionID: s,
      messageID: m,
      type: 'tool',
      tool: 'edit',
      callID: 'c1',
      state: { status: 'completed', title: 'src/lib/virtual.ts', input: { filePath: 'src/lib/virtual.ts' }, output: 'Edited 1 file.' },
    }),
    (s, m) => text(s, m, sample),
    (s, m) => text(s, m, 'hidden instructions', { synthetic: true }),
  ],
  { modelID: 'claude-sonnet-4-5', providerID: 'anthropic', agent: 'build' },
);
push(main.id, 'assistant', [(s, m) => text(s, m, 'This one failed.')], {
  modelID: 'claude-sonnet-4-5',
  error: { name: 'ProviderAuthError', data: { message: 'API key is invalid' } },
});
push(review.id, 'user', [(s, m) => text(s, m, 'Please review the changes described in this handoff.')]);
push(review.id, 'assistant', [(s, m) => text(s, m, 'Two findings:\n\n- `indexAt` is off by one at the end.\n- Missing tests for prepends.')], {
  modelID: 'gpt-5',
});
for (let i = 0; i < BIG; i++) {
  const long = i % 10 === 0 ? `\n\n${'Lorem ipsum dolor sit amet. '.repeat(20 + (i % 30))}` : '';
  push(big.id, i % 2 ? 'assistant' : 'user', [(s, m) => text(s, m, `Message ${i}${long}`)]);
}

// Two 50-message sessions for the first-frame benchmark: one whose newest 20 replies are 2 kB
// markdown with code, and one of short plain replies (its baseline).
function markdownReply(i) {
  const para = `Reply ${i}: the change keeps the **store** and the *virtual list* in step, see \`applyOlder\` and [the notes](https://example.com/notes).`;
  const code = Array.from({ length: 14 }, (_, k) => `  const row${k} = offsets[${k}] + heights.get(keys[${k}]) ?? estimate; // line ${k}`).join('\n');
  return `${para}\n\n- first point about pages\n- second point about **frames**\n- third point with \`code\`\n\n\`\`\`ts\nfunction layout() {\n${code}\n}\n\`\`\`\n\n${para}\n\n> A quoted remark about ${i}.\n\n| a | b |\n|---|---|\n| ${i} | ${i + 1} |`;
}
const markdownSession = addSession('Markdown replies (50 messages)', dirB, 90);
const plainSession = addSession('Plain replies (50 messages)', dirB, 91);
for (let i = 0; i < 50; i++) {
  const role = i % 2 ? 'assistant' : 'user';
  const rich = role === 'assistant' && i >= 10;
  push(markdownSession.id, role, [(s, m) => text(s, m, rich ? markdownReply(i) : `Message ${i}`)]);
  push(plainSession.id, role, [(s, m) => text(s, m, `Message ${i}`)]);
}

// ---- change stream ------------------------------------------------------------------------

/** The `tabs` change the backend pushes after any tab request. */
function tabsChange(reveal) {
  return { type: 'tabs', tabs: [...tabs], ...(activeTab ? { active: activeTab } : {}), reveal };
}

/** Opens or focuses a tab, as the backend does. */
function showTab(tab) {
  const i = tabs.findIndex((t) => t.dedupeKey === tab.dedupeKey);
  if (i >= 0) tabs[i] = tab;
  else tabs.push(tab);
  activeTab = tab.dedupeKey;
  return tabsChange(true);
}

function emit(...changes) {
  const batch = changes.map((change) => ({ seq: ++seq, change }));
  const data = `data: ${JSON.stringify(batch)}\n\n`;
  for (const res of clients) res.write(data);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function streamReply(sessionID, prompt) {
  statuses[sessionID] = { type: 'busy' };
  emit({ type: 'status', sessionId: sessionID, status: { type: 'busy' } });
  const userMsg = push(sessionID, 'user', [(s, m) => text(s, m, prompt)]);
  emit({ type: 'messageUpserted', info: userMsg.info }, ...userMsg.parts.map((part) => ({ type: 'partUpserted', part })));
  const info = { id: id('msg'), sessionID, role: 'assistant', time: { created: Date.now() }, modelID: 'claude-sonnet-4-5', agent: 'build' };
  const part = { id: id('prt'), sessionID, messageID: info.id, type: 'text', text: '' };
  transcripts.get(sessionID).push({ info, parts: [part] });
  emit({ type: 'messageUpserted', info }, { type: 'partUpserted', part });
  const words = `You said: "${prompt}". ${sample}`.split(/(?<=\s)/);
  for (const word of words) {
    if (statuses[sessionID]?.type !== 'busy') break;
    part.text += word;
    emit({ type: 'partDelta', sessionId: sessionID, messageId: info.id, partId: part.id, field: 'text', delta: word });
    await sleep(25);
  }
  info.time.completed = Date.now();
  delete statuses[sessionID];
  emit({ type: 'messageUpserted', info }, { type: 'status', sessionId: sessionID, status: { type: 'idle' } });
  const s = sessions.get(sessionID);
  s.time.updated = Date.now();
  emit({ type: 'sessionUpserted', session: s });
  return userMsg.info.id;
}

async function handoff(sessionId) {
  const flow = { id: id('flow'), sessionId, step: 'requestingHandoff', startedAt: Date.now(), streamedChars: 0, reused: true, ended: false };
  flows.push(flow);
  const step = async (patch, ms) => {
    Object.assign(flow, patch);
    emit({ type: 'flow', flow: { ...flow } });
    await sleep(ms);
  };
  (async () => {
    await step({}, 600);
    for (let i = 1; i <= 10; i++) await step({ step: 'waitingForHandoff', streamedChars: i * 180 }, 300);
    await step({ step: 'preparingReviewSession', reviewSessionId: review.id }, 500);
    await step({ step: 'sendingReview' }, 500);
    await step({ step: 'done', ended: true }, 0);
    emit(
      showTab({ mode: 'chat', dedupeKey: `session:${review.id}`, label: review.title, directory: review.directory, sessionId: review.id }),
      { type: 'notice', notice: { level: 'success', code: 'notice.reviewReused', params: {}, message: 'Review continued in the existing review session' } },
    );
  })();
  return { ...flow };
}

// ---- Api ----------------------------------------------------------------------------------

const PAGE = Number(opt('page', '100'));
const windows = new Map();

function page(sessionId) {
  const all = transcripts.get(sessionId) ?? [];
  const size = windows.get(sessionId) ?? PAGE;
  return { seq, sessionId, messages: all.slice(Math.max(0, all.length - size)), hasOlder: all.length > size };
}

class ApiError extends Error {
  constructor(code, message, status = 400) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

function need(sessionId) {
  const s = sessions.get(sessionId);
  if (!s) throw new ApiError('not_found', `no session ${sessionId}`, 404);
  return s;
}

// ---- cold reviews: a small ledger, and a review that takes two seconds ----------------------

const MOCK_REVIEW = [
  'P1 FAIL — "Increments": no file or function is named; name them.',
  'P2 PASS — one Status line per increment.',
  'P3 PASS — closes #44.',
  'P4 PASS — tests by category.',
  'P5 PASS — looked for aliases, shims, migrations: none.',
  'P6 PASS — each risk names its direction.',
  'P7 PASS — claims point at tests.',
  'P8 PASS — delivery steps listed.',
  'VERDICT: FLAGS (1)',
].join('\n');
const ledger = [
  {
    key: 'gate1', kind: 'commit', source: 'staged', cwd: '/home/dev/crosscheck', path: null, author: 'claude-opus-4-1',
    reviewer: 'claude-opus-4-1', status: 'clean', outcome: 'clean', verdict: 'CLEAN', findings: 0,
    review: 'J1 PASS\nJ2 PASS\nJ3 PASS\nJ4 PASS\nJ5 PASS\nJ6 PASS\nJ7 PASS\nJ8 PASS\nVERDICT: CLEAN',
    durationMs: 9120, attempts: 0, createdAt: Date.now() - 3_600_000, updatedAt: Date.now() - 3_600_000,
  },
];
const reviewTexts = new Map([['gate1', 'diff --git a/src/x.rs b/src/x.rs\n+fn crlf() {}\n']]);

function coldReview(sessionId, messageId) {
  const key = id('key');
  const now = Date.now();
  const entry = {
    key, kind: 'plan', source: 'message', cwd: sessions.get(sessionId)?.directory ?? '/', path: null, author: 'fake-model',
    reviewer: 'claude-sonnet-4-5', status: 'pending', outcome: 'pending', verdict: null, findings: null, review: null,
    durationMs: null, attempts: 0, createdAt: now, updatedAt: now,
  };
  ledger.push(entry);
  const text = (transcripts.get(sessionId) ?? []).filter((m) => m.info.role === 'assistant').map((m) => m.parts.map((p) => p.text ?? '').join('\n')).pop() ?? '';
  reviewTexts.set(key, text);
  const progress = { id: id('rvw'), sessionId, status: 'running', kind: 'plan', key, source: 'message', ...(messageId ? { messageId } : {}), startedAt: now };
  emit({ type: 'review', review: progress });
  emit(showTab({ mode: 'reviews', dedupeKey: 'reviews', label: 'Reviews' }));
  setTimeout(() => {
    Object.assign(entry, { status: 'flagged', outcome: 'flagged', verdict: 'FLAGS (1)', findings: 1, review: MOCK_REVIEW, durationMs: 2000, updatedAt: Date.now() });
    emit({ type: 'review', review: { ...progress, status: 'done', entry: { ...entry } } });
    emit({ type: 'notice', notice: { level: 'info', code: 'notice.coldReviewFlagged', params: { reviewer: entry.reviewer, count: '1' }, message: 'Cold review: 1 finding' } });
  }, 2000);
  return progress;
}

async function api(req) {
  switch (req.cmd) {
    case 'snapshot':
      return {
        seq,
        connection: { state: 'ready', url: 'http://127.0.0.1:4096', version: '1.18.33', managed: true },
        sessions: [...sessions.values()],
        statuses,
        permissions: [],
        settings,
        tabs,
        ...(activeTab ? { activeTab } : {}),
        flows,
      };
    case 'openSession':
      need(req.sessionId);
      windows.set(req.sessionId, PAGE);
      return page(req.sessionId);
    case 'loadOlder': {
      // Like the backend: only the page before the loaded window.
      need(req.sessionId);
      await sleep(150);
      const all = transcripts.get(req.sessionId) ?? [];
      const loaded = windows.get(req.sessionId) ?? PAGE;
      windows.set(req.sessionId, loaded + PAGE);
      const end = Math.max(0, all.length - loaded);
      const start = Math.max(0, end - PAGE);
      return { seq, sessionId: req.sessionId, messages: all.slice(start, end), hasOlder: start > 0 };
    }
    case 'closeSession':
      return null;
    case 'createSession': {
      const s = addSession(req.title || 'New session', req.directory, 0);
      emit({ type: 'sessionUpserted', session: s });
      return s;
    }
    case 'renameSession': {
      const s = need(req.sessionId);
      s.title = req.title;
      emit({ type: 'sessionUpserted', session: s });
      return s;
    }
    case 'archiveSession': {
      const s = need(req.sessionId);
      if (req.archived) s.time.archived = Date.now();
      else delete s.time.archived;
      emit({ type: 'sessionUpserted', session: s });
      return s;
    }
    case 'deleteSession':
      need(req.sessionId);
      sessions.delete(req.sessionId);
      emit({ type: 'sessionRemoved', sessionId: req.sessionId });
      return null;
    case 'sendPrompt': {
      need(req.sessionId);
      const messageId = id('msg');
      void streamReply(req.sessionId, req.text);
      return { messageId };
    }
    case 'runCommand':
      need(req.sessionId);
      if (req.command === 'cold-review') return coldReview(req.sessionId);
      void streamReply(req.sessionId, `/${req.command} ${req.arguments}`);
      return { messageId: id('msg') };
    case 'abort':
      delete statuses[req.sessionId];
      emit({ type: 'status', sessionId: req.sessionId, status: { type: 'idle' } });
      return null;
    case 'providers':
      return {
        providers: [
          {
            id: 'anthropic',
            name: 'Anthropic',
            models: [
              { id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5', variants: ['high', 'max'] },
              { id: 'claude-haiku-4-5', name: 'Claude Haiku 4.5', variants: [] },
            ],
          },
          { id: 'openai', name: 'OpenAI', models: [{ id: 'gpt-5', name: 'GPT-5', variants: ['low', 'medium', 'high'] }] },
        ],
        default: { anthropic: 'claude-sonnet-4-5' },
      };
    case 'agents':
      return [
        { name: 'build', mode: 'primary', description: 'Builds things' },
        { name: 'plan', mode: 'primary' },
        { name: 'general', mode: 'subagent' },
      ];
    case 'commands':
      return [
        { name: 'handoff-review', descriptionKey: 'command.handoffReview', builtin: true },
        { name: 'cold-review', descriptionKey: 'command.coldReview', builtin: true },
        { name: 'init', description: 'create/update AGENTS.md', builtin: false },
        { name: 'review', description: 'review changes', builtin: false },
      ];
    case 'setSettings':
      settings = req.settings;
      emit({ type: 'settings', settings });
      return settings;
    case 'openTab':
      emit(showTab(req.tab));
      return null;
    case 'closeTab': {
      const i = tabs.findIndex((t) => t.dedupeKey === req.key);
      if (i >= 0) tabs.splice(i, 1);
      if (activeTab === req.key) activeTab = (tabs[i] ?? tabs[i - 1])?.dedupeKey;
      emit(tabsChange(false));
      return null;
    }
    case 'activateTab':
      activeTab = req.key;
      emit(tabsChange(true));
      return null;
    case 'moveTab': {
      const i = tabs.findIndex((t) => t.dedupeKey === req.key);
      if (i >= 0) tabs.splice(Math.min(req.toIndex, tabs.length - 1), 0, ...tabs.splice(i, 1));
      emit(tabsChange(false));
      return null;
    }
    case 'prompts':
      return prompts;
    case 'setPrompt': {
      const p = prompts.find((x) => x.name === req.name);
      if (!p) throw new ApiError('not_found', `no prompt ${req.name}`, 404);
      Object.assign(p, { template: req.template, overridden: req.template !== p.defaultTemplate });
      return p;
    }
    case 'resetPrompt': {
      const p = prompts.find((x) => x.name === req.name);
      if (!p) throw new ApiError('not_found', `no prompt ${req.name}`, 404);
      Object.assign(p, { template: p.defaultTemplate, overridden: false });
      return p;
    }
    case 'startHandoffReview':
      need(req.sessionId);
      return handoff(req.sessionId);
    case 'cancelFlow': {
      const f = flows.find((x) => x.id === req.flowId);
      if (f) {
        f.step = 'cancelled';
        f.ended = true;
        emit({ type: 'flow', flow: { ...f } });
      }
      return Boolean(f);
    }
    case 'transfer': {
      const s = need(req.sessionId);
      const meta = s.metadata?.openchamber ?? {};
      const target = meta.kind === 'review' ? meta.originalSessionID : meta.reviewSessionID;
      if (!target) throw new ApiError('no_linked_session', 'session has no linked session');
      await sleep(300);
      void streamReply(target, 'Forwarded text');
      return { targetSessionId: target, direction: meta.kind === 'review' ? 'toImplementer' : 'toReviewer', messageId: id('msg') };
    }
    case 'coldReview':
      need(req.sessionId);
      return coldReview(req.sessionId, req.messageId);
    case 'listReviews':
      return [...ledger].sort((a, b) => b.updatedAt - a.updatedAt).slice(0, req.limit ?? 200);
    case 'getReview': {
      const entry = ledger.find((e) => e.kind === req.kind && e.key === req.key);
      return entry ? { entry, text: reviewTexts.get(entry.key) ?? null } : null;
    }
    default:
      throw new ApiError('invalid_request', `unknown command ${req.cmd}`);
  }
}

// ---- HTTP ---------------------------------------------------------------------------------

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png' };

function authorized(req, url) {
  if (!TOKEN) return true;
  return req.headers.authorization === `Bearer ${TOKEN}` || url.searchParams.get('token') === TOKEN;
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/api' && req.method === 'POST') {
    if (!authorized(req, url)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'unauthorized', message: 'bad token' }));
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    try {
      const result = await api(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result ?? null));
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500;
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ code: err.code ?? 'internal', message: String(err.message ?? err) }));
    }
    return;
  }
  if (url.pathname === '/api/events') {
    if (!authorized(req, url)) {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    // As the backend: first the sequence number the stream starts after.
    res.write(`event: start\ndata: ${JSON.stringify({ seq })}\n\n`);
    clients.add(res);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    req.on('close', () => {
      clearInterval(ping);
      clients.delete(res);
    });
    return;
  }
  const path = normalize(join(DIST, url.pathname === '/' ? 'index.html' : url.pathname));
  if (!path.startsWith(DIST) || !existsSync(path) || !statSync(path).isFile()) {
    res.writeHead(404).end('not found');
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
  createReadStream(path).pipe(res);
});

server.listen(PORT, '127.0.0.1', () => {
  console.log(`mock backend on http://127.0.0.1:${PORT}/${TOKEN ? `?token=${TOKEN}` : ''}`);
});
