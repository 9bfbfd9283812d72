// The handoff's progress strip says when the awaited turn has made model calls without writing
// any text (a model answering garbage), and only while the flow runs.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it } from 'vitest';

const { default: FlowProgress } = await import('$lib/components/review/FlowProgress.svelte');
const { store } = await import('$lib/state/store.svelte');

type FlowState = import('$lib/types/FlowState').FlowState;

function flow(over: Partial<FlowState> = {}): FlowState {
  return {
    id: 'flw_1',
    sessionId: 'ses_impl',
    step: 'waitingForHandoff',
    startedAt: Date.now(),
    streamedChars: 0,
    callsWithoutText: 0,
    reused: false,
    ended: false,
    ...over,
  };
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  store.flows.clear();
});

function push(state: FlowState, seq: number) {
  store.enqueue([{ seq, change: { type: 'flow', flow: state } }]);
  store.flush();
  flushSync();
}

describe('flow progress', () => {
  it('shows the model calls a turn made without text while it runs', () => {
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(FlowProgress, { target, props: { sessionId: 'ses_impl' } });
    push(flow(), 1);
    const silent = () => target.querySelector('[data-testid="flow-silent"]');
    expect(silent()).toBeNull();
    push(flow({ callsWithoutText: 12 }), 2);
    expect(silent()?.textContent?.trim()).toBe('no text after 12 model calls');
    push(flow({ callsWithoutText: 12, step: 'cancelled', ended: true }), 3);
    expect(silent()).toBeNull();
  });
});
