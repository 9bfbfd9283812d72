// Loaded into the benches' pages before their own scripts (Playwright's `addInitScript`):
// `window.__afterFrame(run)` runs `run` in the first task after the current frame's rendering,
// where a probe stamps "painted". A user-blocking task runs before the page's own timers and
// messages (the work the app leaves for after the paint, such as the window title, would
// otherwise count); a message where the page has no task scheduler.
window.__afterFrame = (run) => {
  if (globalThis.scheduler?.postTask) globalThis.scheduler.postTask(run, { priority: 'user-blocking' });
  else {
    const ch = new MessageChannel();
    ch.port1.onmessage = run;
    ch.port2.postMessage(0);
  }
};
