// Process facts from /proc (Linux): children of a process, whether one still runs, its folder.

import fs from 'node:fs';

/** The fields of /proc/PID/stat after the command name: [state, ppid, ...]; null when gone. */
function stat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Whether a process exists and is not a zombie. */
export function isRunning(pid) {
  const fields = stat(pid);
  return !!fields && fields[0] !== 'Z';
}

/** Pids of the running children of `pid`. */
export function childrenOf(pid) {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      const fields = stat(child);
      return !!fields && fields[0] !== 'Z' && Number(fields[1]) === pid;
    });
}

/** The command line of a process, as one string. */
export function commandLine(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** The working folder of a process. */
export function workingFolder(pid) {
  return fs.realpathSync(`/proc/${pid}/cwd`);
}

/** Waits until `check()` is truthy; answers its value. */
export async function waitFor(check, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
