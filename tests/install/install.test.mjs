// The binary outside the clone: `crosscheck serve` from a fresh folder serves the UI built into
// it (no --ui-dir), and `make install PREFIX=<tmp> PROFILE=debug` (reusing the debug builds)
// gives a `crosscheck` and a desktop app that work from another folder. Needs `make build
// desktop` first (the Makefile's test-install target does it).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { makeTempDir } from '../support/cleanup.mjs';
import { crosscheckBin, REPO_ROOT, startCrosscheck } from '../support/crosscheck.mjs';
import { DESKTOP_ENTRY } from '../support/desktop-entry.mjs';

const run = promisify(execFile);
// Nothing listens on port 9: Crosscheck keeps trying to connect; the page is served anyway.
const NO_SERVER = 'http://127.0.0.1:9';

const started = [];
after(async () => {
  for (const cc of started) await cc.stop();
});

/** Fetches the app's page and the script it names; answers both bodies. */
async function fetchApp(cc) {
  const page = await fetch(cc.url);
  assert.equal(page.status, 200);
  const html = await page.text();
  // Every hashed script the page loads (a small first one that asks the snapshot, then the app).
  const scripts = [...html.matchAll(/src="\.?\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  assert.ok(scripts.length > 0, `a hashed script in the page:\n${html}`);
  const texts = [];
  for (const script of scripts) {
    const js = await fetch(`${cc.base}/${script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(js.status, 200, script);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(js.headers.get('content-type'), /^text\/javascript/);
    texts.push(await js.text());
  }
  return { html, js: texts.join('\n') };
}

test('crosscheck serve, copied out of the build and started in a fresh folder, serves the UI built into it', async () => {
  const home = makeTempDir('crosscheck-outside-');
  const bin = path.join(home, 'bin', 'crosscheck');
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.copyFileSync(crosscheckBin(), bin);
  fs.chmodSync(bin, 0o755);
  const project = path.join(home, 'project');
  fs.mkdirSync(project);
  const cc = await startCrosscheck({ bin, cwd: project, uiDir: false, opencodeUrl: NO_SERVER });
  started.push(cc);
  const { html, js } = await fetchApp(cc);
  assert.match(html, /<div id="app"/);
  assert.ok(js.length > 10_000, 'the real bundle');
  assert.doesNotMatch(cc.output(), /not built/);
});

test('make install PREFIX=<tmp> installs crosscheck, the desktop app, its entry and icons; the installed crosscheck works from another folder', async () => {
  const prefix = makeTempDir('crosscheck-prefix-');
  const { stdout } = await run('make', ['-C', REPO_ROOT, '--no-print-directory', 'install', `PREFIX=${prefix}`, 'PROFILE=debug'], {
    env: process.env,
    maxBuffer: 16 * 1024 * 1024,
  });
  assert.match(stdout, new RegExp(`Installed ${prefix}/bin/crosscheck`));
  for (const file of ['bin/crosscheck', 'bin/crosscheck-desktop']) {
    const stat = fs.statSync(path.join(prefix, file));
    assert.ok(stat.mode & 0o111, `${file} is executable`);
  }
  const entry = fs.readFileSync(path.join(prefix, 'share/applications', DESKTOP_ENTRY), 'utf8');
  assert.match(entry, new RegExp(`^Exec=${prefix}/bin/crosscheck-desktop$`, 'm'));
  assert.match(entry, /^Icon=crosscheck$/m);
  for (const size of ['32x32', '128x128', '256x256']) {
    assert.ok(fs.existsSync(path.join(prefix, `share/icons/hicolor/${size}/apps/crosscheck.png`)), size);
  }

  const elsewhere = makeTempDir('crosscheck-elsewhere-');
  const installed = path.join(prefix, 'bin', 'crosscheck');
  const cc = await startCrosscheck({ bin: installed, cwd: elsewhere, uiDir: false, opencodeUrl: NO_SERVER });
  started.push(cc);
  await fetchApp(cc);

  // The hooks it writes name the installed binary by its absolute path.
  const hook = await run(installed, ['gate', 'install', 'claude', '--print'], { cwd: elsewhere, env: { ...process.env, CROSSCHECK_DATA_DIR: cc.dataDir, CROSSCHECK_CONFIG_DIR: cc.configDir } });
  assert.match(hook.stdout, new RegExp(`"${installed} gate plan --format claude-json"`));
});
