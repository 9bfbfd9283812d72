// The `.deb` as a user gets it: `make deb` runs this on the package it built (CROSSCHECK_DEB).
// It holds both programs, a desktop entry that starts the one it ships, and icons; unpacked into
// a fresh folder, its `crosscheck serve` serves the UI built into it from another folder.
// Not part of `make test`: the package is a release build of both programs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { makeTempDir } from '../support/cleanup.mjs';
import { startCrosscheck } from '../support/crosscheck.mjs';
import { DESKTOP_ENTRY } from '../support/desktop-entry.mjs';

const run = promisify(execFile);
const DEB = process.env.CROSSCHECK_DEB;
// Nothing listens on port 9: Crosscheck keeps trying to connect; the page is served anyway.
const NO_SERVER = 'http://127.0.0.1:9';

const started = [];
after(async () => {
  for (const cc of started) await cc.stop();
});

/** The package's file list, as paths without the leading `./`. */
async function contents() {
  const { stdout } = await run('dpkg-deb', ['--contents', DEB], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.split('\n').filter(Boolean).map((line) => line.split(/\s+/).slice(5).join(' ').replace(/^\.\//, ''));
}

test('the package names a .deb that exists', () => {
  assert.ok(DEB, 'CROSSCHECK_DEB names the package to check (make deb sets it)');
  assert.ok(fs.statSync(DEB).size > 1_000_000, `${DEB} is a real package`);
});

test('it ships crosscheck, the desktop app, a desktop entry that starts the app, and icons', async () => {
  const files = await contents();
  assert.ok(files.includes('usr/bin/crosscheck'), `usr/bin/crosscheck in:\n${files.join('\n')}`);
  const entries = files.filter((f) => /^usr\/share\/applications\/[^/]+\.desktop$/.test(f));
  assert.equal(entries.length, 1, `one desktop entry in:\n${files.join('\n')}`);
  assert.equal(path.basename(entries[0]), DESKTOP_ENTRY, 'the entry the badge signal names');
  const icons = files.filter((f) => /^usr\/share\/icons\/hicolor\/\d+x\d+(@2)?\/apps\/[^/]+\.png$/.test(f));
  assert.ok(icons.length >= 2, `icons in:\n${files.join('\n')}`);

  const root = makeTempDir('crosscheck-deb-');
  await run('dpkg-deb', ['--extract', DEB, root]);
  const entry = fs.readFileSync(path.join(root, entries[0]), 'utf8');
  const exec = /^Exec=(\S+)/m.exec(entry)?.[1];
  assert.ok(exec, `an Exec line in:\n${entry}`);
  const program = path.join(root, 'usr/bin', path.basename(exec));
  assert.ok(fs.statSync(program).mode & 0o111, `the entry's program ${exec} is in the package and executable`);
  assert.notEqual(path.basename(exec), 'crosscheck', 'the entry starts the desktop app, not the command');
  const icon = /^Icon=(\S+)/m.exec(entry)?.[1];
  assert.ok(icons.some((f) => path.basename(f, '.png') === icon), `the entry's icon ${icon} is among ${icons.join(', ')}`);
  assert.match(entry, /^Categories=.*Development/m);

  const { stdout: depends } = await run('dpkg-deb', ['--field', DEB, 'Depends']);
  assert.match(depends, /libwebkit2gtk-4\.1/, 'the desktop app depends on WebKitGTK');
});

test('the unpacked crosscheck serves the UI built into it from another folder', async () => {
  const root = makeTempDir('crosscheck-deb-run-');
  await run('dpkg-deb', ['--extract', DEB, root]);
  const elsewhere = makeTempDir('crosscheck-deb-cwd-');
  const cc = await startCrosscheck({ bin: path.join(root, 'usr/bin/crosscheck'), cwd: elsewhere, uiDir: false, opencodeUrl: NO_SERVER });
  started.push(cc);
  const page = await fetch(cc.url);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /<div id="app"/);
  // Every hashed script the page loads (a small first one that asks the snapshot, then the app).
  const scripts = [...html.matchAll(/src="\.?\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  assert.ok(scripts.length > 0, 'a hashed script in the page');
  let total = 0;
  for (const script of scripts) {
    const js = await fetch(`${cc.base}/${script}`);
    assert.equal(js.status, 200, script);
    total += (await js.text()).length;
  }
  assert.ok(total > 10_000, 'the real bundle');
  assert.doesNotMatch(cc.output(), /not built/);
});
