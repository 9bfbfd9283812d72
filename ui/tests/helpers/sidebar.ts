// The Sidebar mounted over a snapshot of sessions, for the tests of its long list. Their files
// mock `$lib/host` first (with `quietHost`, or a mock of their own) so that nothing goes out.
import { flushSync, mount, tick } from 'svelte';
import type { SessionView } from '$lib/types/SessionView';
import { snapshotOf } from './snapshot';

/** `$lib/host` with no backend: every request answers null, and no change comes. */
export function quietHost<T extends object>(actual: T): T {
  return { ...actual, invoke: async () => null, subscribe: () => () => undefined };
}

/** Mounts the Sidebar over `sessions`, local settings cleared first; answers the mounted app. */
export async function mountSidebar(sessions: SessionView[]): Promise<ReturnType<typeof mount>> {
  const { store } = await import('$lib/state/store.svelte');
  const { default: Sidebar } = await import('../../src/lib/components/sessions/Sidebar.svelte');
  localStorage.clear();
  store.applySnapshot(snapshotOf(sessions));
  const target = document.createElement('div');
  document.body.appendChild(target);
  const app = mount(Sidebar, { target });
  await tick();
  flushSync();
  return app;
}
