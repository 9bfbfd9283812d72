// Shared browser-test helpers: a page that records its errors and every toast it shows, and a
// condition wait with a clear timeout message.

/**
 * Opens a page that records uncaught page errors and every toast ever shown (toasts go away by
 * themselves, so tests read `window.__toasts`). Returns `{ page, pageErrors }`.
 */
export async function newRecordedPage(browser) {
  const pageErrors = [];
  const page = await browser.newPage();
  page.on('pageerror', (err) => {
    pageErrors.push(err.message);
    console.log(`page error: ${err.message}`);
  });
  await page.context().addInitScript(() => {
    window.__toasts = [];
    const seen = new WeakSet();
    const scan = () => {
      for (const el of document.querySelectorAll('[data-testid="toast"]')) {
        if (seen.has(el)) continue;
        seen.add(el);
        window.__toasts.push({ level: el.getAttribute('data-level'), text: (el.textContent || '').trim() });
      }
    };
    new MutationObserver(scan).observe(document, { subtree: true, childList: true });
  });
  return { page, pageErrors };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something truthy; throws naming `what` after `timeoutMs`. */
export async function until(probe, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ''}`);
    }
    await sleep(100);
  }
}
