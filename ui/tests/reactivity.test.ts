import { flushSync } from 'svelte';
import { describe, expect, it } from 'vitest';
import { Store } from '$lib/state/store.svelte';
import { watch } from './helpers/watch.svelte';

function setup() {
  const store = new Store();
  store.applySnapshot({
    seq: 0,
    connection: { state: 'connecting' },
    sessions: [],
    statuses: {},
    permissions: [],
    settings: { theme: 'system', locale: '', handoffTimeoutMs: 1, notifications: { reviewDone: true, permission: true, loopStopped: true, question: true, turnFailed: true, turnFinished: true, reviewStale: true, handoffFailed: true, sound: false }, reviewerReadOnly: true, reviewerShellAllow: [], loopBudget: {} },
    tabs: [],
    flows: [],
    sessionErrors: {},
  });
  store.transcript('s1');
  const part = (id: string, messageID: string, text: string) => ({ id, sessionID: 's1', messageID, type: 'text', text, synthetic: false, ignored: false });
  store.applyPage({
    seq: 1,
    sessionId: 's1',
    hasOlder: false,
    messages: [
      { info: { id: 'm1', sessionID: 's1', role: 'assistant', time: { created: 1 } }, parts: [part('p1', 'm1', 'a')] },
      { info: { id: 'm2', sessionID: 's1', role: 'assistant', time: { created: 2 } }, parts: [part('p2', 'm2', 'b')] },
    ],
  });
  return store;
}

describe('fine-grained updates', () => {
  it('a delta re-runs only readers of that part', () => {
    const store = setup();
    const t = store.transcripts.get('s1')!;
    const p1 = watch(() => t.message('m1')!.part('p1')!.text);
    const p2 = watch(() => t.message('m2')!.part('p2')!.text);
    const list = watch(() => t.messages.length);
    const parts = watch(() => t.message('m1')!.parts.length);
    flushSync();
    store.enqueue([{ seq: 2, change: { type: 'partDelta', sessionId: 's1', messageId: 'm1', partId: 'p1', field: 'text', delta: 'bc' } }]);
    store.flush();
    flushSync();
    expect(p1.values).toEqual(['a', 'abc']);
    expect(p2.values).toEqual(['b']);
    expect(list.values).toEqual([2]);
    expect(parts.values).toEqual([1]);
    for (const w of [p1, p2, list, parts]) w.stop();
  });

  it('a new message updates the list, not the existing messages', () => {
    const store = setup();
    const t = store.transcripts.get('s1')!;
    const list = watch(() => t.messages.map((m) => m.id).join(','));
    const info = watch(() => t.message('m1')!.info.role);
    flushSync();
    store.enqueue([{ seq: 2, change: { type: 'messageUpserted', info: { id: 'm3', sessionID: 's1', role: 'user', time: { created: 3 } } } }]);
    store.flush();
    flushSync();
    expect(list.values).toEqual(['m1,m2', 'm1,m2,m3']);
    expect(info.values).toEqual(['assistant']);
    list.stop();
    info.stop();
  });

  it('status changes are per session', () => {
    const store = setup();
    const s1 = watch(() => store.statusOf('s1'));
    flushSync();
    store.enqueue([{ seq: 3, change: { type: 'status', sessionId: 's1', status: { type: 'busy' } } }]);
    store.flush();
    flushSync();
    store.enqueue([{ seq: 4, change: { type: 'status', sessionId: 's1', status: { type: 'idle' } } }]);
    store.flush();
    flushSync();
    expect(s1.values).toEqual(['idle', 'busy', 'idle']);
    s1.stop();
  });
});
