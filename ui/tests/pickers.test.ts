import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: ModelSearch } = await import('$lib/components/chat/ModelSearch.svelte');
const { groupModels, noteModel, recentModels } = await import('$lib/state/recentModels');
const { DirectoryCatalog } = await import('$lib/state/catalog.svelte');

type ProviderInfo = import('$lib/types/ProviderInfo').ProviderInfo;

const providers: ProviderInfo[] = [
  { id: 'anthropic', name: 'Anthropic', models: [
    { id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5', variants: [] },
    { id: 'claude-opus-4-1', name: 'Claude Opus 4.1', variants: [] },
  ] },
  { id: 'openai', name: 'OpenAI', models: [
    { id: 'gpt-5', name: 'GPT-5', variants: [] },
    { id: 'gpt-5-mini', name: 'GPT-5 mini', variants: [] },
  ] },
];

let app: ReturnType<typeof mount> | null = null;
beforeEach(() => localStorage.clear());
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
});

function render(props: Record<string, unknown>) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(ModelSearch, { target, props: props as never });
  flushSync();
  return target;
}

const options = (root: ParentNode) =>
  [...root.querySelectorAll('[data-testid="model-option"]')].map((o) => o.getAttribute('data-value'));
const groups = (root: ParentNode) =>
  [...root.querySelectorAll('[data-testid="model-group"]')].map((g) => g.getAttribute('data-key'));

function key(el: Element, k: string) {
  el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  flushSync();
}

describe('model picker', () => {
  it('groups by provider, the last used first, and filters by every word typed', () => {
    expect(groupModels(providers, [], '', 'Recent').map((g) => g.key)).toEqual(['anthropic', 'openai']);
    noteModel('anthropic/claude-opus-4-1');
    noteModel('openai/gpt-5-mini');
    expect(recentModels()).toEqual(['openai/gpt-5-mini', 'anthropic/claude-opus-4-1']);
    const grouped = groupModels(providers, recentModels(), '', 'Recent');
    expect(grouped.map((g) => g.key)).toEqual(['__recent', 'openai', 'anthropic']);
    expect(grouped[0].options.map((o) => o.value)).toEqual(['openai/gpt-5-mini', 'anthropic/claude-opus-4-1']);
    const filtered = groupModels(providers, recentModels(), 'gpt mini', 'Recent');
    expect(filtered.map((g) => g.key)).toEqual(['openai']);
    expect(filtered[0].options.map((o) => o.value)).toEqual(['openai/gpt-5-mini']);
    expect(groupModels(providers, [], 'anthropic opus', 'Recent')[0].options.map((o) => o.modelID)).toEqual(['claude-opus-4-1']);
    expect(groupModels(providers, [], 'nothing-like-it', 'Recent')).toEqual([]);
    // A remembered model the server no longer has is not offered.
    localStorage.setItem('crosscheck.recentModels', JSON.stringify(['gone/model', 'openai/gpt-5']));
    expect(groupModels(providers, recentModels(), '', 'Recent')[0].options.map((o) => o.value)).toEqual(['openai/gpt-5']);
  });

  it('opens a searchable list: type to filter, arrows to move, Enter picks and remembers, Escape closes', async () => {
    const onpick = vi.fn();
    const root = render({ providers, value: '', label: 'Model', defaultLabel: 'Default model', onpick });
    const trigger = root.querySelector('[data-testid="model-picker"]') as HTMLButtonElement;
    expect(trigger.getAttribute('aria-haspopup')).toBe('listbox');
    expect(trigger.getAttribute('aria-label')).toBe('Model');
    expect(trigger.textContent?.trim()).toBe('Default model');
    trigger.click();
    flushSync();
    await Promise.resolve();
    const search = root.querySelector('[data-testid="model-search"]') as HTMLInputElement;
    expect(document.activeElement).toBe(search);
    expect(search.getAttribute('role')).toBe('combobox');
    expect(options(root)).toEqual(['', 'anthropic/claude-sonnet-4-5', 'anthropic/claude-opus-4-1', 'openai/gpt-5', 'openai/gpt-5-mini']);
    search.value = 'gpt';
    search.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    expect(options(root)).toEqual(['openai/gpt-5', 'openai/gpt-5-mini']);
    key(search, 'ArrowDown');
    const active = root.querySelector(`#${search.getAttribute('aria-activedescendant')}`);
    expect(active?.getAttribute('data-value')).toBe('openai/gpt-5-mini');
    key(search, 'Enter');
    expect(onpick).toHaveBeenCalledWith('openai/gpt-5-mini');
    expect(root.querySelector('[data-testid="model-menu"]')).toBeNull();
    expect(document.activeElement).toBe(trigger);
    expect(recentModels()[0]).toBe('openai/gpt-5-mini');

    // Reopened: the last used group is on top; Escape closes without picking.
    trigger.click();
    flushSync();
    expect(groups(root)).toEqual(['__recent', 'openai', 'anthropic']);
    const again = root.querySelector('[data-testid="model-search"]') as HTMLInputElement;
    again.value = 'zzz';
    again.dispatchEvent(new Event('input', { bubbles: true }));
    flushSync();
    expect(root.querySelector('[data-testid="model-none"]')).not.toBeNull();
    key(again, 'Escape');
    expect(root.querySelector('[data-testid="model-menu"]')).toBeNull();
    expect(onpick).toHaveBeenCalledTimes(1);
  });
});

describe('agent pickers', () => {
  it("hide OpenCode's internal agents and offer plan as the read-only reviewer", async () => {
    // The real server's /agent list (1.18.33): compaction, summary and title are `hidden`.
    invoke.mockImplementation(async (req: { cmd: string }) => {
      if (req.cmd === 'agents') {
        return [
          { name: 'build', mode: 'primary', hidden: false },
          { name: 'compaction', mode: 'primary', hidden: true },
          { name: 'explore', mode: 'subagent', hidden: false },
          { name: 'general', mode: 'subagent', hidden: false },
          { name: 'plan', mode: 'primary', hidden: false },
          { name: 'summary', mode: 'primary', hidden: true },
          { name: 'title', mode: 'primary', hidden: true },
        ];
      }
      return req.cmd === 'providers' ? { providers, default: {} } : [];
    });
    const cat = new DirectoryCatalog('/p');
    await cat.load();
    expect(cat.primaryAgents.map((a) => a.name)).toEqual(['build', 'plan']);
    expect(cat.readOnlyAgent).toBe('plan');
    invoke.mockImplementation(async (req: { cmd: string }) =>
      req.cmd === 'agents' ? [{ name: 'build', mode: 'primary', hidden: false }] : [],
    );
    const without = new DirectoryCatalog('/q');
    await without.load();
    expect(without.readOnlyAgent).toBeUndefined();
  });
});

describe('catalog per server', () => {
  it("asks a session's own server for its models, agents and commands, and keeps the servers apart", async () => {
    const { catalog } = await import('$lib/state/catalog.svelte');
    invoke.mockReset();
    invoke.mockImplementation(async (req: { cmd: string; serverId?: string }) =>
      req.cmd === 'providers'
        ? { providers: [{ id: 'fake', name: 'Fake', models: [{ id: req.serverId ?? 'main', name: 'M', variants: [] }] }], default: {} }
        : [],
    );
    const second = catalog.get('/same/folder', 'srv_second');
    const main = catalog.get('/same/folder');
    await second.load();
    await main.load();
    const asked = invoke.mock.calls.map(([req]) => [req.cmd, req.serverId]);
    expect(asked).toContainEqual(['providers', 'srv_second']);
    expect(asked).toContainEqual(['agents', 'srv_second']);
    expect(asked).toContainEqual(['commands', 'srv_second']);
    expect(asked).toContainEqual(['providers', undefined]);
    expect(second.providers?.providers[0].models[0].id).toBe('srv_second');
    expect(main.providers?.providers[0].models[0].id).toBe('main');
  });
});
