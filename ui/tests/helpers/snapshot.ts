// Snapshots for tests: a connected server and nothing else but the sessions given.
import type { SessionView } from '$lib/types/SessionView';
import type { Snapshot } from '$lib/types/Snapshot';

/** A snapshot at `seq` listing `sessions`, with empty tabs, flows and permissions. */
export function snapshotOf(sessions: SessionView[], seq = 1): Snapshot {
  return {
    seq,
    connection: { state: 'ready', url: 'http://127.0.0.1:4096', version: '1', managed: false },
    sessions,
    statuses: {},
    permissions: [],
    settings: { theme: 'light', locale: 'en' },
    tabs: [],
    flows: [],
    sessionErrors: {},
  } as unknown as Snapshot;
}

/** `n` sessions in one folder, `ses_000`.. titled `Session 000`.., newer as the number grows. */
export function numberedSessions(n: number): SessionView[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `ses_${String(i).padStart(3, '0')}`,
    slug: `s${i}`,
    projectID: 'p',
    directory: '/home/dev/proj',
    title: `Session ${String(i).padStart(3, '0')}`,
    time: { created: 0, updated: 1000 + i },
  }));
}
