import { describe, expect, it } from 'vitest';
import { de } from '$lib/i18n/de';
import { en } from '$lib/i18n/en';
import errorCodeSource from '$lib/types/ErrorCode.ts?raw';
import { interpolate, placeholdersOf, resolveLocale, setLocale, t, tError, tNotice } from '$lib/i18n/index.svelte';

/** Every code of the backend's ErrorCode enum, read from the type the backend exports. */
const ERROR_CODES: string[] = [...errorCodeSource.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);

describe('locales', () => {
  it('en and de have exactly the same keys', () => {
    expect(Object.keys(de).sort()).toEqual(Object.keys(en).sort());
  });

  it('every key has the same placeholders in both locales', () => {
    for (const key of Object.keys(en) as (keyof typeof en)[]) {
      expect({ key, placeholders: placeholdersOf(de[key]) }).toEqual({ key, placeholders: placeholdersOf(en[key]) });
    }
  });

  it('no string is empty, and German is really translated', () => {
    for (const [key, value] of Object.entries(de)) expect({ key, empty: value.trim() === '' }).toEqual({ key, empty: false });
    const same = Object.keys(en).filter((k) => en[k as keyof typeof en] === de[k as keyof typeof de]);
    // Names and symbols may stay as they are; everything else is translated.
    expect(same.length).toBeLessThan(Object.keys(en).length * 0.1);
  });

  it('has a key for every backend error code, notice code and the seed strings', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(20);
    for (const code of ERROR_CODES) expect(en).toHaveProperty(`error.${code}`);
    expect(en).toHaveProperty('error.unknown');
    for (const key of [
      'notice.transferSent.toImplementer',
      'notice.transferSent.toReviewer',
      'notice.reviewStarted',
      'notice.reviewReused',
      'notice.handoffFailed',
      'notice.coldReviewClean',
      'notice.coldReviewFlagged',
      'notice.coldReviewFailed',
      'command.coldReview',
    ]) {
      expect(en).toHaveProperty(key);
    }
    expect(en['transfer.toImplementer']).toBe('Send review feedback to implementing agent');
    expect(en['transfer.toReviewer']).toBe('Send implementation response to reviewing agent');
    expect(en['command.handoffReview']).toBe('Hand off this work to a reviewing agent');
  });
});

describe('t', () => {
  it('interpolates {name} placeholders and leaves unknown ones', () => {
    expect(interpolate('a {x} b {y}', { x: 1 })).toBe('a 1 b {y}');
    setLocale('en');
    expect(t('sidebar.noMatches', { query: 'foo' })).toBe('No sessions match “foo”.');
  });

  it('switches locale', () => {
    setLocale('de');
    expect(t('delete.confirm')).toBe('Löschen');
    setLocale('en');
    expect(t('delete.confirm')).toBe('Delete');
  });

  it('resolves the locale from settings, then the browser, then English', () => {
    expect(resolveLocale('de', ['en-US'])).toBe('de');
    expect(resolveLocale('', ['de-AT', 'en'])).toBe('de');
    expect(resolveLocale('', ['fr-FR'])).toBe('en');
    expect(resolveLocale('xx', ['fr'])).toBe('en');
  });

  it('localizes error codes with a fallback', () => {
    setLocale('en');
    expect(tError('not_found')).toBe('That no longer exists; it may have been deleted elsewhere.');
    expect(tError('something_new')).toBe('Something went wrong; try again, and open Details if it repeats.');
  });

  it('localizes notices, falling back to the English message when a key or param is missing', () => {
    setLocale('de');
    expect(tNotice('notice.reviewStarted', {}, 'Review started')).toBe(t('notice.reviewStarted'));
    expect(tNotice('notice.coldReviewClean', {}, 'Clean: gpt-5')).toBe('Clean: gpt-5');
    expect(tNotice('notice.coldReviewClean', { reviewer: 'kaputt-1' }, 'x')).toContain('kaputt-1');
    expect(tNotice('notice.unknownThing', {}, 'English text')).toBe('English text');
    setLocale('en');
  });
});

describe('times and durations a user reads', () => {
  it('German relative times say minutes, not "m"; English ones are short words', async () => {
    const { relativeTime } = await import('$lib/i18n/index.svelte');
    const now = Date.UTC(2026, 0, 1, 12);
    setLocale('de');
    expect(relativeTime(now - 60_000, now)).toBe('vor 1 Min.');
    expect(relativeTime(now - 60_000, now)).not.toMatch(/\d m$/);
    setLocale('en');
    expect(relativeTime(now - 2 * 3_600_000, now)).toBe('2 hr. ago');
  });

  it('one duration format for seconds, minutes and hours, with the locale’s separators', async () => {
    const { formatDuration } = await import('$lib/i18n/index.svelte');
    setLocale('en');
    expect(formatDuration(8312)).toBe('8.3 sec');
    expect(formatDuration(45_000)).toBe('45 sec');
    expect(formatDuration(185_000)).toBe('3 min 5 sec');
    expect(formatDuration(80 * 60_000)).toBe('1 hr 20 min');
    setLocale('de');
    expect(formatDuration(8312)).toBe('8,3 Sek.');
    expect(formatDuration(185_000)).toBe('3 Min. 5 Sek.');
    setLocale('en');
  });

  it('the German texts call cold reviews by a German name and address the user one way', () => {
    const text = Object.values(de).join('\n');
    expect(text).not.toContain('Kalt-Review');
    // The formal imperative ("Prüfen Sie", "Wählen Sie") beside the informal one everywhere else.
    expect(text).not.toMatch(/\b\w+en Sie\b/);
  });
});
