// What most e2e tests run against, started in one call: the scripted model server, a real
// `opencode serve` on it, a `crosscheck serve` attached to that, and headless Chromium with one
// recording page. Tests that need something else (several servers, a desktop window) start the
// parts themselves.

import { launchBrowser } from './browser.mjs';
import { startCrosscheck } from './crosscheck.mjs';
import { subscribeEvents } from './events.mjs';
import { startModelServer } from './model-server.mjs';
import { startOpencode } from './opencode.mjs';
import { newRecordedPage } from './page.mjs';

/**
 * Starts the stack. `opencode` (options, or a function of the model server giving them) is
 * passed to `startOpencode` (its `modelUrl` and `password` are filled in), `crosscheck` to `startCrosscheck` (its `opencodeUrl` and `password` likewise);
 * `events: true` subscribes to OpenCode's own event stream; `browser: false` skips Chromium.
 * `before(stack)` runs once the model server and OpenCode are up (`stack.ms`, `stack.oc`) and
 * before Crosscheck starts, to seed sessions or files Crosscheck should find on its first listing.
 * @returns {Promise<{ms: any, oc: any, cc: any, browser: any, page: any, pageErrors: string[],
 *   events: any, stop: () => Promise<void>}>}
 */
export async function startStack({
  password, opencode = {}, crosscheck = {}, events = false, browser = true, viewport, before,
} = {}) {
  const stack = { ms: null, oc: null, cc: null, browser: null, page: null, pageErrors: [], events: null };
  stack.stop = async () => {
    stack.events?.close?.();
    await stack.browser?.close();
    await stack.cc?.stop();
    await stack.oc?.dispose();
    await stack.ms?.close();
  };
  try {
    stack.ms = await startModelServer();
    const opencodeOptions = typeof opencode === 'function' ? opencode(stack.ms) : opencode;
    stack.oc = await startOpencode({ modelUrl: stack.ms.url, password, ...opencodeOptions });
    if (events) stack.events = await subscribeEvents(stack.oc.url, { headers: stack.oc.authHeaders });
    if (before) await before(stack);
    stack.cc = await startCrosscheck({ opencodeUrl: stack.oc.url, password, ...crosscheck });
    if (browser) {
      stack.browser = await launchBrowser(viewport ? { viewport } : {});
      ({ page: stack.page, pageErrors: stack.pageErrors } = await newRecordedPage(stack.browser));
    }
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return stack;
}
