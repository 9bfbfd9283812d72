// Start a real `opencode serve` (the binary pinned in tests/package.json) fully isolated and
// offline: fresh HOME and XDG dirs, every OPENCODE_DISABLE_* switch, the config folder seeded so
// the background `npm install @opencode-ai/plugin` never runs, and a provider `fake` pointed at
// the scripted model server (model-server.mjs).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  makeTempDir, onCleanup, removeTempDir, stopChild, trackChild,
} from './cleanup.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const TESTS_DIR = path.resolve(here, '..');
export const OPENCODE_VERSION = '1.18.33';

/** Path of the pinned opencode binary (env OPENCODE_BIN overrides). */
export function opencodeBin() {
  if (process.env.OPENCODE_BIN) return process.env.OPENCODE_BIN;
  const nm = path.join(TESTS_DIR, 'node_modules');
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const candidates = [
    `opencode-${process.platform}-${arch}`,
    `opencode-${process.platform}-${arch}-baseline`,
    `opencode-${process.platform}-${arch}-musl`,
  ].map((pkg) => path.join(nm, pkg, 'bin', 'opencode'));
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) {
    throw new Error(`opencode binary not found (looked for ${candidates.join(', ')}); run \`npm install\` in tests/`);
  }
  return found;
}

/** Path of the opencode binary of another pinned version, installed under an npm alias
 * (`"opencode-ai-1-15": "npm:opencode-ai@1.15.13"` in tests/package.json). */
export function opencodeBinOf(alias) {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const roots = [path.join(TESTS_DIR, 'node_modules', alias, 'node_modules'), path.join(TESTS_DIR, 'node_modules')];
  const candidates = roots.flatMap((nm) => [
    `opencode-${process.platform}-${arch}`,
    `opencode-${process.platform}-${arch}-baseline`,
  ].map((pkg) => path.join(nm, pkg, 'bin', 'opencode')));
  const want = JSON.parse(fs.readFileSync(path.join(TESTS_DIR, 'node_modules', alias, 'package.json'), 'utf8')).version;
  const found = candidates.find((p) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(p, '..', '..', 'package.json'), 'utf8')).version === want;
    } catch { return false; }
  });
  if (!found) throw new Error(`opencode ${want} binary not found under ${alias}; run \`npm install\` in tests/`);
  return found;
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The env switches that keep OpenCode offline and quiet. */
export const OFFLINE_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_PURE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1',
};

/** The opencode.json that routes every model call to the fake provider. */
export function opencodeConfig(modelUrl) {
  const baseURL = modelUrl.replace(/\/+$/, '').replace(/(\/v1)?$/, '/v1');
  return {
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    lsp: false,
    formatter: false,
    plugin: [],
    enabled_providers: ['fake'],
    model: 'fake/fake-model',
    small_model: 'fake/fake-model',
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake',
        options: { baseURL, apiKey: 'sk-fake' },
        models: { 'fake-model': { name: 'Fake Model', limit: { context: 128000, output: 4096 } } },
      },
    },
  };
}

/** Seed `<dir>` (an OpenCode config folder) so the plugin install is skipped. */
export function seedConfigFolder(dir) {
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  const deps = { '@opencode-ai/plugin': OPENCODE_VERSION };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ dependencies: deps }, null, 2));
  fs.writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: deps } } }, null, 2),
  );
}

/** Basic auth header value for a server password. */
export function basicAuth(password) {
  return 'Basic ' + Buffer.from(`opencode:${password}`).toString('base64');
}

/** Keep the tail of a stream for error messages. */
function tail(limit = 16384) {
  let buf = '';
  return {
    push(chunk) { buf = (buf + chunk).slice(-limit); },
    get text() { return buf; },
  };
}

/**
 * Start `opencode serve`.
 * @param {{modelUrl: string, port?: number, password?: string, projectDir?: string,
 *   config?: object, env?: Record<string,string>, timeoutMs?: number, bin?: string}} opts
 *   (`bin`: another opencode binary, e.g. {@link opencodeBinOf} of an older pinned version)
 * @returns {Promise<{url: string, port: number, pid: number, password?: string, projectDir: string,
 *   root: string, configPath: string, startupMs: number, output: () => string,
 *   fetch: (p: string, init?: RequestInit) => Promise<Response>, json: (p: string, init?: object) => Promise<any>,
 *   stop: () => Promise<void>, restart: () => Promise<void>, dispose: () => Promise<void>}>}
 */
export async function startOpencode({
  modelUrl, port, password, projectDir, config, env = {}, timeoutMs = 60_000, bin: chosenBin,
} = {}) {
  if (!modelUrl) throw new Error('startOpencode: modelUrl is required');
  const bin = chosenBin ?? opencodeBin();
  const root = makeTempDir('crosscheck-opencode-');
  const dirs = {
    HOME: path.join(root, 'home'),
    XDG_CONFIG_HOME: path.join(root, 'config'),
    XDG_DATA_HOME: path.join(root, 'data'),
    XDG_CACHE_HOME: path.join(root, 'cache'),
    XDG_STATE_HOME: path.join(root, 'state'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  seedConfigFolder(path.join(dirs.XDG_CONFIG_HOME, 'opencode'));

  const project = projectDir ?? path.join(root, 'project');
  fs.mkdirSync(project, { recursive: true });
  // An unseeded .opencode/ in the project would trigger the plugin install again.
  const dotOpencode = path.join(project, '.opencode');
  if (fs.existsSync(dotOpencode) && !fs.existsSync(path.join(dotOpencode, 'package-lock.json'))) {
    seedConfigFolder(dotOpencode);
  }
  const realProject = fs.realpathSync(project);

  const configPath = path.join(root, 'opencode.json');
  fs.writeFileSync(configPath, JSON.stringify(config ?? opencodeConfig(modelUrl), null, 2));

  const thePort = port || (await freePort());
  const url = `http://127.0.0.1:${thePort}`;
  const childEnv = {
    PATH: process.env.PATH,
    LANG: process.env.LANG ?? 'C.UTF-8',
    TZ: process.env.TZ ?? 'UTC',
    TMPDIR: process.env.TMPDIR,
    ...dirs,
    ...OFFLINE_ENV,
    OPENCODE_CONFIG: configPath,
    ...env,
  };
  if (password) childEnv.OPENCODE_SERVER_PASSWORD = password;
  for (const k of Object.keys(childEnv)) if (childEnv[k] === undefined) delete childEnv[k];
  const authHeaders = password ? { authorization: basicAuth(password) } : {};

  let child = null;
  let out = tail();
  let startupMs = 0;
  let readyLineMs = 0;

  async function launch() {
    out = tail();
    const t0 = Date.now();
    child = spawn(bin, ['serve', '--hostname', '127.0.0.1', '--port', String(thePort)], {
      cwd: realProject,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // own process group: stop() kills anything it spawned too
    });
    trackChild(child.pid, 'opencode');
    const current = child;
    let readyLine = false;
    current.stdout.setEncoding('utf8');
    current.stderr.setEncoding('utf8');
    current.stdout.on('data', (s) => {
      out.push(s);
      if (!readyLine && s.includes('opencode server listening on')) { readyLine = true; readyLineMs = Date.now() - t0; }
    });
    current.stderr.on('data', (s) => out.push(s));
    let exitInfo = null;
    current.once('exit', (code, signal) => { exitInfo = { code, signal }; });
    current.once('error', (err) => { exitInfo = { code: null, signal: null, error: err.message }; });

    const deadline = t0 + timeoutMs;
    let lastErr = null;
    while (Date.now() < deadline) {
      if (exitInfo) break;
      // Only after the "listening" line: before it the port may already accept connections
      // whose requests never get an answer. Poll anyway after 15 s, in case the line changes.
      if (readyLine || Date.now() - t0 > 15_000) {
        try {
          const res = await fetch(`${url}/global/health`, {
            headers: authHeaders, signal: AbortSignal.timeout(2000),
          });
          const body = await res.text();
          if (res.ok && body.includes('"healthy":true')) {
            startupMs = Date.now() - t0;
            return;
          }
          lastErr = new Error(`health ${res.status}: ${body.slice(0, 200)}`);
        } catch (err) { lastErr = err; }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const why = exitInfo
      ? `exited early (code ${exitInfo.code}, signal ${exitInfo.signal}${exitInfo.error ? `, ${exitInfo.error}` : ''})`
      : `not healthy after ${timeoutMs} ms (${lastErr?.message ?? 'no answer'})`;
    await stopChild(current);
    throw new Error(`opencode serve on port ${thePort} ${why}\n--- opencode output ---\n${out.text}`);
  }

  async function stop() {
    const c = child;
    child = null;
    if (c) await stopChild(c, { graceMs: 5000 });
  }

  let disposed = false;
  async function dispose() {
    if (disposed) return;
    disposed = true;
    unregister();
    await stop();
    removeTempDir(root);
  }
  const unregister = onCleanup(dispose);

  try {
    await launch();
  } catch (err) {
    await dispose();
    throw err;
  }

  const handle = {
    url,
    port: thePort,
    get pid() { return child?.pid ?? null; },
    password,
    projectDir: realProject,
    root,
    dirs,
    configPath,
    env: childEnv,
    /** ms from spawn until /global/health answered (last start) */
    get startupMs() { return startupMs; },
    /** ms from spawn until the "listening" line (last start) */
    get readyLineMs() { return readyLineMs; },
    /** stdout+stderr tail of the current process */
    output: () => out.text,
    authHeaders,
    /** fetch a path on the server with auth */
    fetch: (p, init = {}) => fetch(url + p, { ...init, headers: { ...authHeaders, ...(init.headers ?? {}) } }),
    /** JSON request: json('/session', {method:'POST', body:{...}}) -> parsed body; throws on !ok */
    async json(p, { method = 'GET', body, headers = {} } = {}) {
      const res = await fetch(url + p, {
        method,
        headers: { ...authHeaders, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${p} -> ${res.status}: ${text.slice(0, 500)}`);
      return text ? JSON.parse(text) : null;
    },
    stop,
    async restart() {
      await stop();
      await launch();
    },
    dispose,
  };
  return handle;
}
