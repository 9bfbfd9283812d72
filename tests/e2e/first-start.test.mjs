// The first start without OpenCode, and the managed server's folder and lifetime: the
// terminal and the main area say what was looked for and how to install it; Retry starts it
// once it is there; the field attaches to a running server; the managed server runs in the
// folder Crosscheck was started from (never the home folder itself); SIGTERM stops it and a
// SIGKILLed Crosscheck leaves none behind.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, screenshot } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { crosscheckBin, startCrosscheck } from '../support/crosscheck.mjs';
import { OFFLINE_ENV, opencodeBin, opencodeConfig, seedConfigFolder, startOpencode } from '../support/opencode.mjs';
import { childrenOf, commandLine, isRunning, waitFor, workingFolder } from '../support/procs.mjs';

const UI_TIMEOUT = 20_000;
const PASSWORD = 'first-start-secret';

let root;
let bin;
let env;
let home;
let project;
let browser;
const started = [];

/** A copy of the binary in a folder of its own: nothing next to it or above it holds OpenCode. */
function copyBinary(dir) {
  const target = path.join(dir, 'bin', 'crosscheck');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(crosscheckBin(), target);
  fs.chmodSync(target, 0o755);
  return target;
}

/** Puts the pinned OpenCode where Crosscheck looks next to its executable. */
function installNextTo(exe) {
  const target = path.join(path.dirname(exe), 'node_modules', 'opencode-linux-x64', 'bin', 'opencode');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.symlinkSync(opencodeBin(), target);
}

async function start(opts) {
  const cc = await startCrosscheck({ bin, uiDir: false, env, ...opts });
  started.push(cc);
  return cc;
}

/** The managed `opencode serve` below a Crosscheck process. */
function managedServer(cc) {
  return childrenOf(cc.pid).find((pid) => / serve /.test(`${commandLine(pid)} `));
}

function exited(cc) {
  return new Promise((resolve) => {
    if (cc.child.exitCode !== null || cc.child.signalCode !== null) resolve();
    else cc.child.once('exit', () => resolve());
  });
}

before(async () => {
  root = makeTempDir('crosscheck-first-start-');
  bin = copyBinary(root);
  home = path.join(root, 'home');
  project = path.join(home, 'project');
  fs.mkdirSync(project, { recursive: true });
  // What the managed server inherits: an isolated, offline OpenCode, and no opencode on PATH.
  const xdg = {
    XDG_CONFIG_HOME: path.join(root, 'xdg-config'),
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    XDG_CACHE_HOME: path.join(root, 'xdg-cache'),
    XDG_STATE_HOME: path.join(root, 'xdg-state'),
  };
  seedConfigFolder(path.join(xdg.XDG_CONFIG_HOME, 'opencode'));
  const configPath = path.join(root, 'opencode.json');
  fs.writeFileSync(configPath, JSON.stringify(opencodeConfig('http://127.0.0.1:9/v1')));
  env = {
    HOME: home,
    ...xdg,
    ...OFFLINE_ENV,
    OPENCODE_CONFIG: configPath,
    PATH: '/usr/local/bin:/usr/bin:/bin',
    CROSSCHECK_OPENCODE_BIN: '',
    CROSSCHECK_OPENCODE_URL: '',
  };
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  for (const cc of started) await cc.stop();
});

test('without OpenCode the terminal and the main area say what was looked for, and Retry starts it once installed', async () => {
  const cc = await start({ cwd: project });
  await waitFor(() => /OpenCode is not installed/.test(cc.output()), 'the terminal message');
  const out = cc.output();
  assert.match(out, /Looked for:\n {2}- opencode on PATH \(\/usr\/local\/bin:\/usr\/bin:\/bin\)/);
  assert.ok(out.includes(`${path.join(root, 'bin', 'node_modules')}/`), out);
  assert.match(out, /npm install -g opencode-ai/);

  const page = await browser.newPage();
  await page.goto(cc.url);
  const setup = page.locator('[data-testid="server-setup"][data-state="notInstalled"]');
  await setup.waitFor({ timeout: UI_TIMEOUT });
  const looked = await page.locator('[data-testid="server-looked"] li').allTextContents();
  assert.match(looked[0], /^opencode on PATH/);
  assert.ok(looked.includes(`${path.join(root, 'bin', 'node_modules')}/`), looked.join('\n'));
  assert.equal(await page.locator('[data-testid="server-status"]').getAttribute('data-state'), 'notInstalled');
  assert.ok(await page.getByRole('button', { name: 'Retry' }).isVisible());
  assert.ok(await page.getByRole('textbox', { name: 'Server URL' }).isVisible());
  await screenshot(page, 'first-start-no-opencode');

  installNextTo(bin);
  await page.locator('[data-testid="server-retry"]').click();
  await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: 60_000 });
  assert.equal(await setup.count(), 0);
  await waitFor(() => /OpenCode 1\.18\.33 started at http:\/\/127\.0\.0\.1:\d+, in /.test(cc.output()), 'the ready line');
  // The managed server runs in the folder Crosscheck was started from.
  const server = managedServer(cc);
  assert.ok(server, 'a managed opencode serve');
  assert.equal(workingFolder(server), fs.realpathSync(project));
  assert.ok(cc.output().includes(`in ${fs.realpathSync(project)}`), cc.output());
  await page.context().close();

  // SIGKILL leaves no managed server behind (the kernel's parent-death signal).
  process.kill(cc.pid, 'SIGKILL');
  await exited(cc);
  await waitFor(() => !isRunning(server), 'the managed server to end with Crosscheck', 10_000);
});

test('started from the home folder itself, the managed server runs in a folder of its own, and SIGTERM stops it', async () => {
  const cc = await start({ cwd: home });
  await waitFor(() => managedServer(cc) && /OpenCode .* started at/.test(cc.output()), 'the managed server', 60_000);
  const server = managedServer(cc);
  const folder = workingFolder(server);
  assert.notEqual(folder, fs.realpathSync(home));
  assert.notEqual(folder, '/');
  assert.equal(folder, fs.realpathSync(path.join(cc.dataDir, 'workspace')));

  process.kill(cc.pid, 'SIGTERM');
  await exited(cc);
  assert.equal(cc.child.exitCode, 0, cc.output());
  await waitFor(() => !isRunning(server), 'the managed server to stop', 10_000);
});

test('the field in the main area attaches to a running server at a URL', async () => {
  const alone = makeTempDir('crosscheck-attach-');
  const exe = copyBinary(alone);
  const cc = await start({ bin: exe, cwd: project });
  const oc = await startOpencode({ modelUrl: 'http://127.0.0.1:9', password: PASSWORD });
  try {
    const title = 'Session on the attached server';
    await oc.json('/session', { method: 'POST', body: { title } });
    const page = await browser.newPage();
    await page.goto(cc.url);
    await page.locator('[data-testid="server-setup"]').waitFor({ timeout: UI_TIMEOUT });
    await page.locator('[data-testid="attach-url"]').fill('not a url');
    await page.locator('[data-testid="attach-submit"]').click();
    // The browser's own check refuses it: nothing is sent, the form stays.
    assert.equal(await page.locator('[data-testid="server-setup"]').count(), 1);
    await page.locator('[data-testid="attach-url"]').fill(oc.url);
    await page.locator('[data-testid="attach-password"]').fill(PASSWORD);
    await page.locator('[data-testid="attach-submit"]').click();
    await page.locator('[data-testid="server-status"][data-state="ready"]').waitFor({ timeout: UI_TIMEOUT });
    await page.locator('[data-testid="session-item"]', { hasText: title }).waitFor({ timeout: UI_TIMEOUT });
    await waitFor(() => cc.output().includes(`Attached to OpenCode 1.18.33 at ${oc.url}`), 'the terminal line');
    await page.context().close();
  } finally {
    await oc.dispose();
  }
});
