// The "Needs you" list read from each session's attention reasons: newest first across
// sessions, the unread dot, the sidebar's filters, and the key that jumps to the next item.
import { describe, expect, it } from 'vitest';
import { NeedsYouIndex, isUnread, matchesFilter, needsYouItems, nextItem } from '$lib/attention';
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

  it('keeps the items of sessions that did not change, and the list when nothing did', () => {
    const index = new NeedsYouIndex();
    const first = index.items([a, b, c]);
    expect(index.items([a, b, c])).toBe(first);
    // b's question answered, a new reason on c: a's items stay the same objects.
    const b2 = session('ses_b');
    const c2 = session('ses_c', ['turnFailed', 40]);
    const second = index.items([a, b2, c2]);
    expect(second.map((i) => `${i.session.id}:${i.reason.kind}`)).toEqual(['ses_c:turnFailed', 'ses_a:permission', 'ses_a:turnFinished']);
    expect(second[1]).toBe(first[0]);
    expect(second[2]).toBe(first[2]);
    // A session that goes takes its items; the same list from new views is equal, not kept.
    expect(index.items([a, b2]).map((i) => i.key)).toEqual(first.filter((i) => i.session.id === 'ses_a').map((i) => i.key));
    expect(index.items([session('ses_a', ['permission', 30], ['turnFinished', 10]), b2]).map((i) => i.key)).toEqual(
      needsYouItems([a]).map((i) => i.key),
    );
  });
});
