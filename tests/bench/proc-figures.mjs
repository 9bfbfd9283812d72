// Memory and CPU figures of a process from /proc (Linux), for the benchmarks.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Clock ticks per second of /proc/PID/stat's CPU times. */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Proportional set size of a process in kB (/proc/PID/smaps_rollup). */
export function pssKb(pid) {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const m = /^Pss:\s+(\d+) kB/m.exec(text);
  if (!m) throw new Error(`no Pss in /proc/${pid}/smaps_rollup`);
  return Number(m[1]);
}

/** User plus system CPU time a process has used so far, in seconds (/proc/PID/stat). */
export function cpuSeconds(pid) {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** Percent of one core a process used over the next `ms` milliseconds. */
export async function quietCpu(pid, ms) {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const used = cpuSeconds(pid) - c0;
  return (used / ((performance.now() - t0) / 1000)) * 100;
}
