// Headless Debian Chromium driven by playwright-core (no browser download: executablePath).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { onCleanup } from './cleanup.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '..', '..');
/** Where screenshots go: CROSSCHECK_SCREENSHOT_DIR (`make screenshots` sets docs/screenshots),
 * else tests/.run/screenshots (git-ignored), so a test run leaves the clone as it was. */
export const SCREENSHOT_DIR = process.env.CROSSCHECK_SCREENSHOT_DIR
  ? path.resolve(process.env.CROSSCHECK_SCREENSHOT_DIR)
  : path.join(REPO_ROOT, 'tests', '.run', 'screenshots');

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumPath() {
  return process.env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/**
 * Launch headless Chromium. playwright's launch() already runs it on a fresh temporary profile
 * (and refuses a --user-data-dir argument), so no persistent context is needed.
 * Returns the playwright Browser plus `newPage()` (fresh context, fixed viewport) and `close()`.
 */
export async function launchBrowser({ viewport = { width: 1280, height: 800 }, headless = true } = {}) {
  const executablePath = chromiumPath();
  if (!fs.existsSync(executablePath)) {
    throw new Error(`Chromium not found at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`);
  }
  const browser = await chromium.launch({ executablePath, headless, args: CHROMIUM_ARGS });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    unregister();
    await browser.close().catch(() => {});
  };
  const unregister = onCleanup(close);
  return {
    browser,
    async newPage(opts = {}) {
      const context = await browser.newContext({ viewport, ...opts });
      const page = await context.newPage();
      return page;
    },
    close,
  };
}

/** Resolve after two animation frames, so the page has painted what the last action changed. */
export async function twoFrames(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

/** Save a screenshot to SCREENSHOT_DIR/NAME.png; returns the path. */
export async function screenshot(page, name, { fullPage = false } = {}) {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await twoFrames(page);
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}
