// The "Needs you" list read from each session's attention reasons: newest first across
// sessions, the unread dot, the sidebar's filters, and the key that jumps to the next item.
import { describe, expect, it } from 'vitest';
import { isUnread, matchesFilter, needsYouItems, nextItem } from '$lib/attention';
import type { AttentionReason } from '$lib/types/AttentionReason';
import type { SessionView } from '$lib/types/SessionView';

const base = { slug: 's', projectID: 'p', directory: '/a', version: '1', time: { created: 1, updated: 2 } };

function session(id: string, ...attention: [AttentionReason['kind'], number][]): SessionView {
  return { ...base, id, title: id, attention: attention.map(([kind, since]) => ({ kind, since, words: '', questions: [] })) };
}

describe('needs you', () => {
  const a = session('ses_a', ['permission', 30], ['turnFinished', 10]);
  const b = session('ses_b', ['question', 20]);
  const c = session('ses_c');

  it('lists every reason of every session, newest first', () => {
    expect(needsYouItems([a, b, c]).map((i) => `${i.session.id}:${i.reason.kind}`)).toEqual([
      'ses_a:permission',
      'ses_b:question',
      'ses_a:turnFinished',
    ]);
  });

  it('marks unread only what seeing settles', () => {
    expect(isUnread(a)).toBe(true);
    expect(isUnread(b)).toBe(false);
    expect(isUnread(c)).toBe(false);
  });

  it('filters the sidebar by needs you, running and done', () => {
    expect([a, b, c].filter((s) => matchesFilter(s, 'needsYou', false)).map((s) => s.id)).toEqual(['ses_a', 'ses_b']);
    expect(matchesFilter(c, 'running', true)).toBe(true);
    expect(matchesFilter(c, 'running', false)).toBe(false);
    const finished = session('ses_d', ['turnFinished', 5]);
    expect([a, b, c, finished].filter((s) => matchesFilter(s, 'done', false)).map((s) => s.id)).toEqual(['ses_c', 'ses_d']);
    expect(matchesFilter(a, 'all', true)).toBe(true);
  });

  it('jumps to the next item of another session, wrapping', () => {
    const items = needsYouItems([a, b, c]);
    expect(nextItem(items, null)?.session.id).toBe('ses_a');
    expect(nextItem(items, 'ses_a')?.session.id).toBe('ses_b');
    expect(nextItem(items, 'ses_b')?.session.id).toBe('ses_a');
    expect(nextItem([], 'ses_a')).toBeNull();
  });
});
