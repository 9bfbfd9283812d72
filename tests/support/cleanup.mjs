// Process and temp-dir bookkeeping shared by the support modules, so that a failing test
// never leaks a server: every child started here is registered, and killed on process exit
// (synchronously, SIGKILL to its process group) and in a root-level node:test `after` hook.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** @type {Map<number, {name: string, group: boolean}>} live child processes by PID */
const children = new Map();
/** @type {Set<() => Promise<void> | void>} async cleanups (stop servers, remove temp dirs) */
const cleanups = new Set();
/** @type {Set<string>} temp dirs to remove at exit */
const tempDirs = new Set();

export const keepTemp = !!process.env.CROSSCHECK_KEEP_TMP;

/** Register a child process; `group` means it was spawned detached (own process group). */
export function trackChild(pid, name, { group = true } = {}) {
  if (pid) children.set(pid, { name, group });
}

export function untrackChild(pid) {
  children.delete(pid);
}

/** Register an async cleanup; returns a function that unregisters it. */
export function onCleanup(fn) {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

/** Make a temp dir that is removed at exit (unless CROSSCHECK_KEEP_TMP is set). */
export function makeTempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  tempDirs.delete(dir);
  if (!keepTemp) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Send a signal to a child (its whole process group when it has one). */
export function signalChild(pid, signal, group = true) {
  try {
    process.kill(group ? -pid : pid, signal);
    return true;
  } catch {
    try { process.kill(pid, signal); return true; } catch { return false; }
  }
}

export function isAlive(pid) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

/**
 * Stop a spawned ChildProcess: SIGTERM, then SIGKILL after `graceMs`; resolves once it exited.
 * @param {import('node:child_process').ChildProcess} child
 */
export async function stopChild(child, { graceMs = 5000, group = true } = {}) {
  if (!child || !child.pid) return;
  const pid = child.pid;
  const exited = child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', resolve));
  if (child.exitCode === null && child.signalCode === null) {
    signalChild(pid, 'SIGTERM', group);
    const timer = setTimeout(() => signalChild(pid, 'SIGKILL', group), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // The leader is gone; make sure nothing of its group lingers.
  if (group) signalChild(pid, 'SIGKILL', true);
  untrackChild(pid);
}

/** Run every registered cleanup (async), then kill any child still alive. */
export async function cleanupAll() {
  for (const fn of [...cleanups]) {
    cleanups.delete(fn);
    try { await fn(); } catch (err) { console.error('cleanup failed:', err); }
  }
  killAllSync();
  for (const dir of [...tempDirs]) removeTempDir(dir);
}

function killAllSync() {
  for (const [pid, { group }] of children) {
    signalChild(pid, 'SIGKILL', group);
    children.delete(pid);
  }
}

process.on('exit', () => {
  killAllSync();
  if (!keepTemp) for (const dir of tempDirs) { try { fs.rmSync(dir, { recursive: true, force: true }); } catch {} }
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    killAllSync();
    process.exit(128 + (os.constants.signals[sig] ?? 1));
  });
}

// Under the test runner also clean up in a root-level `after` hook, i.e. when the test file
// is done, even if a test failed before reaching its own cleanup.
const underTestRunner = !!process.env.NODE_TEST_CONTEXT
  || process.execArgv.includes('--test')
  || /\.test\.[cm]?js$/.test(process.argv[1] ?? '');
if (underTestRunner) {
  const { after } = await import('node:test');
  after(cleanupAll);
}
