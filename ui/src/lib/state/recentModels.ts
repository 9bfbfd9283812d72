// The models picked last (newest first), for the top of the model picker.

import type { ProviderInfo } from '$lib/types/ProviderInfo';
import { load, save } from './persist';

const KEY = 'crosscheck.recentModels';
const KEEP = 5;

/** `provider/model` values, newest first. */
export function recentModels(): string[] {
  const list = load<unknown>(KEY, []);
  return Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string').slice(0, KEEP) : [];
}

/** Remembers a picked model at the top of the list. */
export function noteModel(value: string): void {
  if (!value) return;
  save(KEY, [value, ...recentModels().filter((v) => v !== value)].slice(0, KEEP));
}

/** One option of the model picker. */
export interface ModelOption {
  value: string;
  providerID: string;
  modelID: string;
  label: string;
  provider: string;
}

/** A group of options under a heading. */
export interface ModelGroup {
  key: string;
  label: string;
  options: ModelOption[];
}

/** Whether every word of `query` is in the option's name, id or provider. */
export function matches(option: ModelOption, query: string): boolean {
  const hay = `${option.label} ${option.modelID} ${option.provider} ${option.providerID}`.toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => hay.includes(word));
}

/** The picker's groups: the recent models first (when not filtering), then one group per
 * provider, the provider of the most recent pick first; only options matching `query`. */
export function groupModels(providers: ProviderInfo[], recent: string[], query: string, recentLabel: string): ModelGroup[] {
  const all = providers.map((p) => ({
    key: p.id,
    label: p.name || p.id,
    options: p.models.map((m) => ({
      value: `${p.id}/${m.id}`,
      providerID: p.id,
      modelID: m.id,
      label: m.name || m.id,
      provider: p.name || p.id,
    })),
  }));
  const byValue = new Map(all.flatMap((g) => g.options.map((o) => [o.value, o] as const)));
  const rank = (g: ModelGroup) => {
    const i = recent.findIndex((v) => v.startsWith(`${g.key}/`));
    return i < 0 ? recent.length : i;
  };
  const groups = [...all].sort((a, b) => rank(a) - rank(b));
  const q = query.trim();
  const out: ModelGroup[] = [];
  if (!q) {
    const options = recent.map((v) => byValue.get(v)).filter((o): o is ModelOption => !!o);
    if (options.length) out.push({ key: '__recent', label: recentLabel, options });
  }
  for (const g of groups) {
    const options = q ? g.options.filter((o) => matches(o, q)) : g.options;
    if (options.length) out.push({ ...g, options });
  }
  return out;
}
