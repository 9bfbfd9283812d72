// The desktop app's managed OpenCode lives as long as the app: SIGTERM to the app, and closing
// its window, stop the `opencode serve` it started. Runs the real window through tauri-driver
// under Xvfb (like smoke.test.mjs), with no server URL, so the app starts OpenCode itself.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeTempDir } from '../support/cleanup.mjs';
import { OFFLINE_ENV, freePort, opencodeBin, opencodeConfig, seedConfigFolder } from '../support/opencode.mjs';
import { childrenOf, commandLine, isRunning, waitFor, workingFolder } from '../support/procs.mjs';
import { desktopPrerequisites, newSession, startTauriDriver, tauriCapabilities } from '../support/webdriver.mjs';

const { bin, missing, skip } = desktopPrerequisites();

let driver;
let root;
let project;

before(async () => {
  if (skip) return;
  if (missing) throw new Error(`desktop lifecycle test cannot run: ${missing}`);
  root = makeTempDir('crosscheck-desktop-life-');
  const home = path.join(root, 'home');
  project = path.join(home, 'project');
  fs.mkdirSync(project, { recursive: true });
  const xdg = {
    XDG_CONFIG_HOME: path.join(root, 'xdg-config'),
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    XDG_CACHE_HOME: path.join(root, 'xdg-cache'),
    XDG_STATE_HOME: path.join(root, 'xdg-state'),
  };
  seedConfigFolder(path.join(xdg.XDG_CONFIG_HOME, 'opencode'));
  const configPath = path.join(root, 'opencode.json');
  fs.writeFileSync(configPath, JSON.stringify(opencodeConfig('http://127.0.0.1:9/v1')));
  // tauri-driver hands its environment to the app, and the app to its managed server.
  driver = await startTauriDriver({
    port: await freePort(),
    nativePort: await freePort(),
    env: {
      HOME: home,
      ...xdg,
      ...OFFLINE_ENV,
      OPENCODE_CONFIG: configPath,
      CROSSCHECK_OPENCODE_URL: '',
      CROSSCHECK_OPENCODE_BIN: opencodeBin(),
      CROSSCHECK_DATA_DIR: path.join(root, 'data'),
      CROSSCHECK_CONFIG_DIR: path.join(root, 'config'),
    },
  });
});

after(async () => {
  await driver?.stop();
});

/** The app's process (a descendant of tauri-driver running the desktop binary). */
function appProcess() {
  const queue = [driver.pid];
  while (queue.length) {
    const pid = queue.shift();
    for (const child of childrenOf(pid)) {
      if (commandLine(child).startsWith(bin)) return child;
      queue.push(child);
    }
  }
  return null;
}

/** Opens the window and waits until its managed server is connected; answers both pids. */
async function openApp() {
  const wd = await newSession(tauriCapabilities(bin), { url: driver.url });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await wd.executeScript(`return document.querySelector('[data-testid="server-status"]')?.dataset.state ?? null`);
    if (state === 'ready') break;
    if (Date.now() > deadline) throw new Error(`the window's server never got ready (last state ${state})`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const app = await waitFor(appProcess, 'the app process');
  const server = await waitFor(() => childrenOf(app).find((pid) => / serve /.test(`${commandLine(pid)} `)), 'its opencode serve');
  return { wd, app, server };
}

test('SIGTERM to the desktop app stops the opencode serve it started', { skip }, async () => {
  const { wd, app, server } = await openApp();
  // The desktop app has no last project yet: not `/`, not the home folder.
  const folder = workingFolder(server);
  assert.notEqual(folder, '/');
  assert.notEqual(folder, fs.realpathSync(path.join(root, 'home')));
  process.kill(app, 'SIGTERM');
  await waitFor(() => !isRunning(app), 'the app to exit', 15_000);
  await waitFor(() => !isRunning(server), 'its opencode serve to stop', 15_000);
  await wd.deleteSession();
});

test('closing the window stops the opencode serve the app started', { skip }, async () => {
  const { wd, app, server } = await openApp();
  await wd.deleteSession();
  await waitFor(() => !isRunning(app), 'the app to exit', 15_000);
  await waitFor(() => !isRunning(server), 'its opencode serve to stop', 15_000);
});
