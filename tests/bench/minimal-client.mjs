// The attention bench's baseline client: a page that hears OpenCode's own event stream and shows
// only what the Needs you item bench makes change, the way Crosscheck's sidebar does: one row per
// session with its status, moved to the top when the session changes, and a permission request
// as a row at the top of a list. It runs in a browser of its own (a second tab of the same browser
// is throttled while the first is in front), with Crosscheck's page closed: run side by side, each
// slowed the other on two cores. Figures only.
import http from 'node:http';

/** The page: `events` is OpenCode's `/event` URL (OpenCode answers any origin). */
function page(events) {
  return `<!doctype html><meta charset="utf-8"><title>Baseline</title>
<style>body{font:13px sans-serif;margin:0;display:flex}ul{margin:0;padding:0;list-style:none;width:260px}li{padding:6px 10px;border-bottom:1px solid #ddd}</style>
<ul id="items"></ul><ul id="rows"></ul>
<script>
const items = document.getElementById('items');
const rows = document.getElementById('rows');
function row(id) {
  let r = document.getElementById('s-' + id);
  if (!r) {
    r = document.createElement('li');
    r.id = 's-' + id;
    rows.prepend(r);
  }
  return r;
}
new EventSource(${JSON.stringify(events)}).onmessage = (e) => {
  const ev = JSON.parse(e.data);
  const p = ev.properties || {};
  if (ev.type === 'session.status') row(p.sessionID).textContent = p.sessionID + ' ' + p.status.type;
  else if (ev.type === 'session.updated') rows.prepend(row(p.info.id));
  else if (ev.type === 'permission.asked') {
    const li = document.createElement('li');
    li.dataset.testid = 'needs-you-item';
    li.dataset.sessionId = p.sessionID;
    li.dataset.kind = 'permission';
    li.textContent = p.permission + ': ' + (p.patterns || []).join(' ');
    items.prepend(li);
  }
};
</script>`;
}

/**
 * Serves the page on 127.0.0.1 and opens it in `context` (with the bench's probe already added).
 * @returns {Promise<{page: import('playwright-core').Page, close: () => Promise<void>}>}
 */
export async function openMinimalClient(context, opencodeUrl) {
  const html = page(`${opencodeUrl}/event`);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const tab = await context.newPage();
  await tab.goto(`http://127.0.0.1:${server.address().port}/`);
  return {
    page: tab,
    close: async () => {
      await tab.close().catch(() => {});
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
