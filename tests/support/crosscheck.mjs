// Start the built `crosscheck serve` (web mode) against an OpenCode server.
//
// Binary: env CROSSCHECK_BIN, else $CARGO_TARGET_DIR/debug/crosscheck, else ../target/debug/crosscheck
// (relative to tests/). It prints exactly one stdout line once it listens:
//   Crosscheck listening on http://127.0.0.1:N/?token=...

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, onCleanup, stopChild, trackChild } from './cleanup.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const TESTS_DIR = path.resolve(here, '..');
export const REPO_ROOT = path.resolve(TESTS_DIR, '..');

/** Cargo's target dir as the build uses it (CARGO_TARGET_DIR, relative to the repo root). */
export function targetDir() {
  const t = process.env.CARGO_TARGET_DIR;
  return t ? path.resolve(REPO_ROOT, t) : path.join(REPO_ROOT, 'target');
}

/** Path of a built binary: env override, else <target>/debug/<name>. */
export function builtBinary(name, envVar) {
  if (envVar && process.env[envVar]) return path.resolve(process.env[envVar]);
  return path.join(targetDir(), 'debug', name);
}

export function crosscheckBin() {
  return builtBinary('crosscheck', 'CROSSCHECK_BIN');
}

const LISTEN_RE = /Crosscheck listening on (http:\/\/[^\s]+)/;

/**
 * The UI folder: `uiDir`, else env CROSSCHECK_UI_DIR, else the repo's ui/dist when built;
 * `uiDir: false` passes none (the binary serves the UI built into it). `cwd`: the folder it is
 * started from (default: the repo root).
 * @param {{opencodeUrl: string, password?: string, dataDir?: string, configDir?: string, bin?: string,
 *   uiDir?: string, args?: string[], env?: Record<string,string>, timeoutMs?: number}} opts
 * @returns {Promise<{url: string, base: string, token: string, pid: number, dataDir: string,
 *   configDir: string, output: () => string, stop: () => Promise<void>}>}
 */
export async function startCrosscheck({
  opencodeUrl, password, dataDir, configDir, bin, uiDir, cwd, args = [], env = {}, timeoutMs = 30_000,
} = {}) {
  const exe = bin ?? crosscheckBin();
  if (!fs.existsSync(exe)) {
    throw new Error(`crosscheck binary not found at ${exe}: build it first (cargo build), or set CROSSCHECK_BIN`);
  }
  const root = (!dataDir || !configDir) ? makeTempDir('crosscheck-app-') : null;
  const data = dataDir ?? path.join(root, 'data');
  const config = configDir ?? path.join(root, 'config');
  fs.mkdirSync(data, { recursive: true });
  fs.mkdirSync(config, { recursive: true });

  const childEnv = {
    ...process.env,
    CROSSCHECK_DATA_DIR: data,
    CROSSCHECK_CONFIG_DIR: config,
    RUST_BACKTRACE: process.env.RUST_BACKTRACE ?? '1',
    ...env,
  };
  delete childEnv.OPENCODE_SERVER_PASSWORD;
  if (password) childEnv.OPENCODE_SERVER_PASSWORD = password;

  const ui = uiDir === false ? null : uiDir ?? process.env.CROSSCHECK_UI_DIR
    ?? (fs.existsSync(path.join(REPO_ROOT, 'ui', 'dist', 'index.html')) ? path.join(REPO_ROOT, 'ui', 'dist') : null);
  const argv = [
    'serve', '--port', '0',
    ...(opencodeUrl ? ['--opencode', opencodeUrl] : []),
    ...(ui ? ['--ui-dir', path.resolve(ui)] : []),
    ...args,
  ];
  const child = spawn(exe, argv, {
    cwd: cwd ?? REPO_ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  trackChild(child.pid, 'crosscheck');
  let out = '';
  const keep = (s) => { out = (out + s).slice(-16384); };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', keep);

  const stop = async () => { unregister(); await stopChild(child, { graceMs: 5000 }); };
  const unregister = onCleanup(stop);

  let urlStr;
  try {
    urlStr = await new Promise((resolve, reject) => {
      let line = '';
      const t = setTimeout(() => reject(new Error(`no listening line within ${timeoutMs} ms`)), timeoutMs);
      child.stdout.on('data', (s) => {
        keep(s);
        line += s;
        const m = LISTEN_RE.exec(line);
        if (m) { clearTimeout(t); resolve(m[1]); }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(t);
        reject(new Error(`exited early (code ${code}, signal ${signal})`));
      });
      child.once('error', (err) => { clearTimeout(t); reject(err); });
    });
  } catch (err) {
    await stop();
    throw new Error(`crosscheck serve (${exe}) ${err.message}\n--- crosscheck output ---\n${out}`);
  }

  const u = new URL(urlStr);
  const token = u.searchParams.get('token') ?? '';
  return {
    child,
    url: urlStr,
    base: `${u.protocol}//${u.host}`,
    token,
    pid: child.pid,
    dataDir: data,
    configDir: config,
    output: () => out,
    /** Sends one Api request (`{cmd, ...}`) over HTTP as the UI does; answers the response. */
    async api(request) {
      const res = await fetch(`${u.protocol}//${u.host}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(request),
      });
      const body = await res.json().catch(() => null);
      if (!res.ok) throw new Error(`${request.cmd}: HTTP ${res.status} ${JSON.stringify(body)}`);
      return body;
    },
    stop,
  };
}
