// A tiny i18n: flat keys, `{name}` placeholders, the locale from settings or the browser.
// `t` reads the current locale from a rune, so templates re-render when it changes.

import { de } from './de';
import { en, type MessageKey } from './en';

export type { MessageKey };
export type Params = Record<string, string | number | undefined>;

export const LOCALES = { en, de } as const;
export type Locale = keyof typeof LOCALES;
export const SUPPORTED: readonly Locale[] = ['en', 'de'];

const state = $state<{ locale: Locale }>({ locale: 'en' });

/** Picks a supported locale from a preference (settings) or the browser's languages. */
export function resolveLocale(preference: string, languages: readonly string[] = browserLanguages()): Locale {
  const candidates = preference ? [preference, ...languages] : languages;
  for (const candidate of candidates) {
    const base = candidate.toLowerCase().split(/[-_]/)[0];
    if ((SUPPORTED as readonly string[]).includes(base)) return base as Locale;
  }
  return 'en';
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === 'undefined') return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language ?? 'en'];
}

export function setLocale(preference: string): Locale {
  state.locale = resolveLocale(preference);
  if (typeof document !== 'undefined') document.documentElement.lang = state.locale;
  return state.locale;
}

export function locale(): Locale {
  return state.locale;
}

/** Fills `{name}` placeholders; unknown ones stay as written. */
export function interpolate(template: string, params?: Params): string {
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

/** The placeholders a template uses, sorted. */
export function placeholdersOf(template: string): string[] {
  return [...new Set([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();
}

/** Translates a known key. */
export function t(key: MessageKey, params?: Params): string {
  const table = LOCALES[state.locale];
  return interpolate(table[key] ?? en[key] ?? key, params);
}

/** A message with plural forms: the part of its keys before `.one`, `.other`, … */
export type PluralKey = MessageKey extends infer K ? (K extends `${infer Base}.other` ? Base : never) : never;

/** Translates a message with plural forms (`KEY.one`, `KEY.other`, as the locale's plural rules
 * name them) for `count`, which is also passed as `{count}`. */
export function tCount(key: PluralKey, count: number, params?: Params): string {
  const form = `${key}.${new Intl.PluralRules(state.locale).select(count)}`;
  return t(hasKey(form) ? form : (`${key}.other` as MessageKey), { count, ...params });
}

/** Whether a dynamic key (error code, notice code, command description) exists. */
export function hasKey(key: string): key is MessageKey {
  return Object.prototype.hasOwnProperty.call(en, key);
}

/** Translates a dynamic key, or returns the fallback when the key is unknown. */
export function tMaybe(key: string, params: Params | undefined, fallback: string): string {
  return hasKey(key) ? t(key, params) : fallback;
}

/** Localized message for an Api error code. */
export function tError(code: string): string {
  const key = `error.${code}`;
  return hasKey(key) ? t(key) : t('error.unknown');
}

/** Localized text for a notice; the English message when the key or a placeholder is missing. */
export function tNotice(code: string, params: Params, fallback: string): string {
  if (!hasKey(code)) return fallback;
  const template = LOCALES[state.locale][code];
  const missing = placeholdersOf(template).some((p) => params[p] === undefined);
  return missing ? fallback : interpolate(template, params);
}

/** Formatters made once per locale (making one costs far more than using it, and a list of
 * rows asks for one per row). */
const relativeFormats = new Map<Locale, { relative: Intl.RelativeTimeFormat; date: Intl.DateTimeFormat }>();

function relativeFormatsOf(locale: Locale) {
  let formats = relativeFormats.get(locale);
  if (!formats) {
    formats = {
      // `short`, not `narrow`: German narrow reads "vor 1 m" (metres); short says "vor 1 Min.".
      relative: new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'short' }),
      date: new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }),
    };
    relativeFormats.set(locale, formats);
  }
  return formats;
}

/** "3 min ago" style relative time, in the current locale. */
export function relativeTime(then: number, now: number): string {
  const diff = Math.round((then - now) / 1000);
  const abs = Math.abs(diff);
  if (abs < 45) return t('time.justNow');
  const { relative, date } = relativeFormatsOf(state.locale);
  if (abs < 3600) return relative.format(Math.round(diff / 60), 'minute');
  if (abs < 86_400) return relative.format(Math.round(diff / 3600), 'hour');
  if (abs < 86_400 * 30) return relative.format(Math.round(diff / 86_400), 'day');
  return date.format(then);
}

/** A duration in the locale's words and separators, one format everywhere: "8.2 sec",
 * "45 sec", "3 min 5 sec", "1 hr 20 min" (German "8,2 Sek.", "3 Min. 5 Sek."). */
export function formatDuration(ms: number): string {
  const unit = (value: number, name: 'second' | 'minute' | 'hour', digits = 0) =>
    new Intl.NumberFormat(state.locale, { style: 'unit', unit: name, unitDisplay: 'short', maximumFractionDigits: digits }).format(value);
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return unit(s, 'second', s < 10 ? 1 : 0);
  const total = Math.round(s);
  const m = Math.floor(total / 60);
  const rest = total % 60;
  if (m < 60) return rest ? `${unit(m, 'minute')} ${unit(rest, 'second')}` : unit(m, 'minute');
  const h = Math.floor(m / 60);
  const rm = m % 60;
  return rm ? `${unit(h, 'hour')} ${unit(rm, 'minute')}` : unit(h, 'hour');
}

/** "1:05" style elapsed time (a running clock). */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mm = h > 0 ? String(m).padStart(2, '0') : String(m);
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
}

export function formatNumber(n: number): string {
  return new Intl.NumberFormat(state.locale).format(n);
}
