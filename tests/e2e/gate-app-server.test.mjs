// The gates review through the app's own OpenCode server, end to end: `crosscheck serve` starts
// the real `opencode serve` itself (its random password is shown nowhere), no API key and no URL
// is given anywhere, and `crosscheck gate plan` still reviews the plan through that server (its
// provider `fake` is the scripted model server, with a `claude-sonnet-4-5` so the default floor
// applies). The record the app keeps is the user's alone, goes away when the app stops, and a
// stale one is ignored.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeTempDir } from '../support/cleanup.mjs';
import { crosscheckBin, startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import {
  OFFLINE_ENV, freePort, opencodeBin, opencodeConfig, seedConfigFolder,
} from '../support/opencode.mjs';

const WAIT = 60_000;
const RECORD = 'opencode-server.json';
const FLAGGED_REVIEW = [
  'P1 FAIL — "Increments" 1: no file or function is named.',
  ...Array.from({ length: 7 }, (_, i) => `P${i + 2} PASS — checked.`),
  'VERDICT: FLAGS (1)',
].join('\n');

// No key for any direct provider, no server named: only the app's own server can review.
const NO_KEYS = {
  ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', ANTHROPIC_BASE_URL: '', OPENAI_BASE_URL: '',
  CROSSCHECK_OPENCODE_URL: '',
};

let ms;
let cc;
let root;
let project;
let dataDir;
let configDir;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(probe, what, timeoutMs = WAIT) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v) return v;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

before(async () => {
  ms = await startModelServer();
  root = makeTempDir('crosscheck-gate-app-server-');
  project = path.join(root, 'home', 'project');
  fs.mkdirSync(project, { recursive: true });
  dataDir = path.join(root, 'data');
  configDir = path.join(root, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  fs.writeFileSync(path.join(configDir, 'review.json'), JSON.stringify({ reviewTimeoutMs: 30_000 }));
  // What the managed server inherits: an isolated, offline OpenCode whose provider is the
  // scripted model server.
  const xdg = {
    XDG_CONFIG_HOME: path.join(root, 'xdg-config'),
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    XDG_CACHE_HOME: path.join(root, 'xdg-cache'),
    XDG_STATE_HOME: path.join(root, 'xdg-state'),
  };
  seedConfigFolder(path.join(xdg.XDG_CONFIG_HOME, 'opencode'));
  const config = opencodeConfig(ms.url);
  config.provider.fake.models['claude-sonnet-4-5'] = {
    name: 'Claude Sonnet 4.5 (scripted)', limit: { context: 128000, output: 4096 },
  };
  const configPath = path.join(root, 'opencode.json');
  fs.writeFileSync(configPath, JSON.stringify(config));
  cc = await startCrosscheck({
    dataDir,
    configDir,
    cwd: project,
    env: {
      HOME: path.join(root, 'home'), ...xdg, ...OFFLINE_ENV, ...NO_KEYS,
      OPENCODE_CONFIG: configPath, CROSSCHECK_OPENCODE_BIN: opencodeBin(),
    },
  });
  await waitFor(() => /OpenCode \S+ started at http:\/\/127\.0\.0\.1:\d+/.test(cc.output()), 'the managed server');
});

after(async () => {
  await cc?.stop();
  await ms?.close();
});

/** Runs the real gate with the app's data and config dirs, no key, no URL, no password. */
function runGate(args) {
  return new Promise((resolve, reject) => {
    const env = {
      ...process.env, ...NO_KEYS, CROSSCHECK_DATA_DIR: dataDir, CROSSCHECK_CONFIG_DIR: configDir,
    };
    delete env.OPENCODE_SERVER_PASSWORD;
    delete env.CROSSCHECK_AUTHOR_MODEL;
    const started = Date.now();
    const child = spawn(crosscheckBin(), ['gate', 'plan', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (s) => (stdout += s));
    child.stderr.on('data', (s) => (stderr += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), WAIT);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

const doneLine = (stderr) => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  .find((e) => e.event === 'plan_review.done');

test('with no URL and no key, the gate reviews a plan through the app\'s own managed server', async () => {
  ms.script([{ text: FLAGGED_REVIEW }]);
  const before = ms.requests.length;
  const gate = await runGate(['--text', '# Plan\n\n1. Accept CRLF in the config reader.\n', '--cwd', project]);
  assert.equal(gate.code, 2, gate.stderr);
  assert.match(gate.stderr, /paused this plan/);
  assert.ok(gate.stderr.includes('P1 FAIL'), gate.stderr);
  const done = doneLine(gate.stderr);
  assert.equal(done.route, 'opencode', gate.stderr);
  assert.equal(done.reviewer, 'fake/claude-sonnet-4-5');
  const sent = ms.requests.slice(before).filter((r) => r.body?.model === 'claude-sonnet-4-5');
  assert.equal(sent.length, 1, 'one model request through the app\'s server');
  assert.match(sent[0].lastUserText, /Accept CRLF in the config reader/);

  // How: the app's record of its server, the user's alone.
  const record = path.join(dataDir, RECORD);
  assert.equal(fs.statSync(record).mode & 0o777, 0o600, 'only the user can read the record');
  const url = /started at (http:\/\/127\.0\.0\.1:\d+)/.exec(cc.output())[1];
  assert.equal(JSON.parse(fs.readFileSync(record, 'utf8')).url, url);
});

test('a stale record (its server gone) is ignored: the gate does not review through it', async () => {
  const record = path.join(dataDir, RECORD);
  const kept = fs.readFileSync(record, 'utf8');
  const dead = `http://127.0.0.1:${await freePort()}`;
  fs.writeFileSync(record, JSON.stringify({ ...JSON.parse(kept), url: dead }), { mode: 0o600 });
  try {
    const gate = await runGate(['--text', '# Plan\n\n1. A stale record.\n', '--cwd', project]);
    const done = doneLine(gate.stderr);
    assert.notEqual(done.route, 'opencode', gate.stderr);
    assert.doesNotMatch(gate.stderr, new RegExp(dead.replace(/[.:/]/g, '\\$&')), 'the dead address is not used');
    assert.ok(gate.ms < 20_000, `the gate answered in ${gate.ms} ms`);
  } finally {
    fs.writeFileSync(record, kept, { mode: 0o600 });
  }
});

test('a clean stop removes the record', async () => {
  await cc.stop();
  cc = null;
  assert.equal(fs.existsSync(path.join(dataDir, RECORD)), false);
});
