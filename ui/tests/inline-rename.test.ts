// Renaming in place, the one rule shared by a session's row and a server's header: Enter or
// leaving the field saves a new, non-empty name (trimmed); Esc, an unchanged or an empty name
// save nothing; a failed save keeps the old name and does not throw.
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InlineRename } from '$lib/state/inlineRename.svelte';

const invoke = vi.fn(async (..._args: unknown[]): Promise<unknown> => null);
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const key = (k: string) => new KeyboardEvent('keydown', { key: k, cancelable: true, bubbles: true });

describe('InlineRename', () => {
  it('saves a new name, trimmed, on Enter and hides the field', async () => {
    const save = vi.fn(async () => undefined);
    const rename = new InlineRename(() => 'Old', save);
    rename.start();
    expect(rename.active).toBe(true);
    expect(rename.draft).toBe('Old');
    rename.draft = '  New name ';
    const enter = key('Enter');
    rename.onKey(enter);
    await Promise.resolve();
    expect(enter.defaultPrevented).toBe(true);
    expect(save).toHaveBeenCalledWith('New name');
    expect(rename.active).toBe(false);
  });

  it('saves nothing for Esc, an unchanged name or an empty one', async () => {
    const save = vi.fn(async () => undefined);
    const rename = new InlineRename(() => 'Old', save);
    rename.start();
    rename.draft = 'Changed';
    const esc = key('Escape');
    rename.onKey(esc);
    expect(esc.defaultPrevented).toBe(true);
    expect(rename.active).toBe(false);
    await rename.commit();
    for (const draft of ['Old', '  Old  ', '   ']) {
      rename.start();
      rename.draft = draft;
      await rename.commit();
    }
    expect(save).not.toHaveBeenCalled();
  });

  it('keeps the old name and does not throw when the save fails', async () => {
    const rename = new InlineRename(() => 'Old', async () => {
      throw new Error('offline');
    });
    rename.start();
    rename.draft = 'New';
    await expect(rename.commit()).resolves.toBeUndefined();
    expect(rename.active).toBe(false);
  });
});

describe('a session row renamed in place', () => {
  let app: ReturnType<typeof mount> | null = null;
  afterEach(() => {
    if (app) unmount(app);
    app = null;
    document.body.innerHTML = '';
    invoke.mockClear();
  });

  it('F2 opens the field with the title; Enter sends the new title once', async () => {
    const { default: SessionItem } = await import('$lib/components/sessions/SessionItem.svelte');
    const target = document.createElement('div');
    document.body.appendChild(target);
    const session = { id: 'ses_r', slug: '', projectID: 'p', directory: '/p', title: 'Old title', time: { created: 1, updated: 2 } };
    app = mount(SessionItem, { target, props: { session, selected: false } });
    flushSync();
    target.querySelector<HTMLButtonElement>('button.main')?.dispatchEvent(key('F2'));
    flushSync();
    const input = target.querySelector<HTMLInputElement>('[data-testid="rename-input"]');
    expect(input?.value).toBe('Old title');
    if (!input) return;
    input.value = 'New title';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(key('Enter'));
    await Promise.resolve();
    flushSync();
    const renames = invoke.mock.calls.filter(([req]) => (req as { cmd?: string })?.cmd === 'renameSession');
    expect(renames).toEqual([[{ cmd: 'renameSession', sessionId: 'ses_r', title: 'New title' }]]);
    expect(target.querySelector('[data-testid="rename-input"]')).toBeNull();
  });
});
