// A D-Bus session bus of a test's own (dbus-daemon on a socket in a temp folder) and a monitor
// that records the launcher-entry badge signals sent on it: what a dock hears from the app.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { makeTempDir, stopChild, trackChild } from './cleanup.mjs';

/** Waits for `pattern` in what `child` writes to stdout; resolves with its first match. */
function firstMatch(child, pattern, what, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${what}: nothing after ${timeoutMs} ms (${text})`)), timeoutMs);
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const m = pattern.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code) => reject(new Error(`${what}: exited with ${code} (${text})`)));
  });
}

/**
 * Starts a private session bus and a monitor of `com.canonical.Unity.LauncherEntry` signals on
 * it. `address` goes into the app's `DBUS_SESSION_BUS_ADDRESS`; `updates()` lists the signals
 * heard so far as `{uri, count, visible}`; `stop()` ends both processes.
 */
export async function startSessionBus() {
  const dir = makeTempDir('crosscheck-bus-');
  const daemon = spawn(
    'dbus-daemon',
    ['--session', '--nofork', '--nopidfile', `--address=unix:path=${path.join(dir, 'bus')}`, '--print-address=1'],
    // Its stderr only notes what a private bus cannot do (raise its fd limit, ...).
    { stdio: ['ignore', 'pipe', 'ignore'], detached: true },
  );
  trackChild(daemon.pid, 'dbus-daemon');
  const address = (await firstMatch(daemon, /^(unix:\S+)\n/m, 'dbus-daemon'))[1];
  const monitor = spawn(
    'dbus-monitor',
    ['--address', address, "type='signal',interface='com.canonical.Unity.LauncherEntry',member='Update'"],
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  );
  trackChild(monitor.pid, 'dbus-monitor');
  let heard = '';
  monitor.stdout.on('data', (chunk) => {
    heard += chunk;
  });
  // The monitor names itself on the bus first (a NameAcquired signal to it) once it listens.
  await firstMatch(monitor, /NameAcquired|NameLost|member=/, 'dbus-monitor');
  return {
    address,
    /** The launcher-entry updates heard so far, oldest first. */
    updates() {
      return heard
        .split(/^signal /m)
        .filter((block) => block.includes('member=Update'))
        .map((block) => ({
          uri: /string "(application:\/\/[^"]*)"/.exec(block)?.[1] ?? null,
          count: Number(/string "count"\s+variant\s+int64 (-?\d+)/.exec(block)?.[1] ?? NaN),
          visible: /string "count-visible"\s+variant\s+boolean (true|false)/.exec(block)?.[1] === 'true',
        }));
    },
    async stop() {
      await stopChild(monitor);
      await stopChild(daemon);
    },
  };
}
