// Managed servers, one per folder, in Chromium against the pinned `opencode serve`: a server
// added in the app as "Start OpenCode in a folder" is started there by Crosscheck, its sessions
// are listed under it, the same folder twice is refused, it is stopped (its process gone) when
// Crosscheck stops, and it starts again on the next launch.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser } from '../support/browser.mjs';
import { makeTempDir } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { OFFLINE_ENV, opencodeBin, opencodeConfig, seedConfigFolder, startOpencode } from '../support/opencode.mjs';
import { until } from '../support/page.mjs';

const WAIT = 60_000;

let ms;
let main;
let root;
let project;
let env;
let cc;
let browser;
let page;

const sectionByName = (name) => page.locator('[data-testid="server-section"]').filter({
  has: page.locator('[data-testid="server-name"]', { hasText: name }),
});

/** The pids of `opencode serve` processes running in `dir` (read from /proc). */
function serversIn(dir) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cwd === dir && cmd.includes('serve')) found.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function openApp() {
  page = await browser.newPage();
  page.on('pageerror', (err) => console.log(`page error: ${err.message}`));
  await page.goto(cc.url);
}

before(async () => {
  ms = await startModelServer();
  main = await startOpencode({ modelUrl: ms.url });
  root = makeTempDir('crosscheck-managed-');
  fs.mkdirSync(path.join(root, 'home', 'managed-project'), { recursive: true });
  project = fs.realpathSync(path.join(root, 'home', 'managed-project'));
  // What the managed server inherits: an isolated, offline OpenCode whose provider is the
  // scripted model server.
  const xdg = {
    XDG_CONFIG_HOME: path.join(root, 'xdg-config'),
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    XDG_CACHE_HOME: path.join(root, 'xdg-cache'),
    XDG_STATE_HOME: path.join(root, 'xdg-state'),
  };
  seedConfigFolder(path.join(xdg.XDG_CONFIG_HOME, 'opencode'));
  const configPath = path.join(root, 'opencode.json');
  fs.writeFileSync(configPath, JSON.stringify(opencodeConfig(ms.url)));
  env = {
    HOME: path.join(root, 'home'), ...xdg, ...OFFLINE_ENV,
    OPENCODE_CONFIG: configPath, CROSSCHECK_OPENCODE_BIN: opencodeBin(), CROSSCHECK_SECRET_STORE: 'file',
  };
  cc = await startCrosscheck({ opencodeUrl: main.url, env });
  browser = await launchBrowser();
  await openApp();
});

after(async () => {
  await browser?.close();
  await cc?.stop();
  await main?.dispose();
  await ms?.close();
});

test('a server started in a folder lists its sessions, is refused twice, and stops with Crosscheck', async () => {
  await page.locator('[data-testid="add-server"]').click();
  await page.locator('[data-testid="add-server-kind-managed"]').check();
  await page.locator('[data-testid="add-server-folder"]').fill(project);
  await page.locator('[data-testid="add-server-submit"]').click();
  await page.locator('[data-testid="add-server-form"]').waitFor({ state: 'detached', timeout: WAIT });

  const managed = sectionByName('managed-project');
  await managed.locator('[data-testid="server-header"][data-health="ready"]').waitFor({ timeout: WAIT });
  const view = (await cc.api({ cmd: 'snapshot' })).servers.find((s) => s.kind === 'managed');
  assert.ok(view?.url, JSON.stringify(view));
  assert.equal(view.folder, project);
  assert.ok(view.saved);

  // A session made on that server (through Crosscheck: the managed server has a password of its
  // own) is listed under it.
  const made = await cc.api({ cmd: 'createSession', directory: project, title: 'Delta in a managed folder', serverId: view.id });
  assert.equal(made.serverId, view.id);
  await managed.locator('[data-testid="session-item"]', { hasText: 'Delta in a managed folder' }).waitFor({ timeout: WAIT });

  // The same folder twice is refused, however it is spelled.
  await assert.rejects(cc.api({ cmd: 'addManagedServer', folder: `${project}/` }), /already has a server/);
  await assert.rejects(cc.api({ cmd: 'addManagedServer', folder: '/' }), /not a folder a server can run in/);

  const pids = serversIn(project);
  assert.equal(pids.length, 1, `one opencode serve in the folder: ${pids}`);
  const dataDir = cc.dataDir;
  const configDir = cc.configDir;
  await page.close();
  await cc.stop();
  await until(async () => !alive(pids[0]), 'the managed server to stop with Crosscheck', 10_000);

  // Started again on the next launch, with its sessions.
  cc = await startCrosscheck({ opencodeUrl: main.url, dataDir, configDir, env });
  await openApp();
  const again = sectionByName('managed-project');
  await again.locator('[data-testid="server-header"][data-health="ready"]').waitFor({ timeout: WAIT });
  await again.locator('[data-testid="session-item"]', { hasText: 'Delta in a managed folder' }).waitFor({ timeout: WAIT });
  const restarted = serversIn(project);
  assert.equal(restarted.length, 1, `${restarted}`);
  assert.notEqual(restarted[0], pids[0]);

  // Removing it stops its process too.
  const id = (await cc.api({ cmd: 'snapshot' })).servers.find((s) => s.kind === 'managed').id;
  await cc.api({ cmd: 'removeServer', serverId: id });
  await until(async () => !alive(restarted[0]), 'the removed managed server to stop', 10_000);
  // The section goes with the change that follows the removal, not with the request's answer.
  await until(async () => (await sectionByName('managed-project').count()) === 0, 'the removed server\'s section to go', WAIT);
});
