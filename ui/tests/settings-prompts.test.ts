// The settings dialog as a user edits it: a template saved without its placeholder is refused
// at its field, naming the placeholder (and nothing is sent); closing with an unsaved template
// warns first; a handoff limit of 0 is refused at its field instead of silently becoming the
// old one; templates are named in words.
import { flushSync, mount, tick, unmount } from 'svelte';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn();
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...args) };
});

const { default: SettingsDialog } = await import('$lib/components/settings/SettingsDialog.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');
const { store } = await import('$lib/state/store.svelte');
const { toasts } = await import('$lib/state/toasts.svelte');
const { templateProblem, placeholdersIn } = await import('$lib/prompts');

const REVIEW = {
  name: 'session.reviewSession.visible',
  template: 'Please review this handoff:\n\n{{handoff}}',
  default: 'Please review this handoff:\n\n{{handoff}}',
  overridden: false,
  placeholders: ['handoff'],
};

let app: ReturnType<typeof mount> | null = null;
const onclose = vi.fn();

async function settle() {
  for (let i = 0; i < 5; i++) {
    await tick();
    await Promise.resolve();
  }
  flushSync();
}

async function open() {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(SettingsDialog, { target, props: { onclose } });
  await settle();
  return target;
}

beforeAll(() => {
  // jsdom has no modal dialogs.
  HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
    this.setAttribute('open', '');
  };
  HTMLDialogElement.prototype.close ??= function (this: HTMLDialogElement) {
    this.removeAttribute('open');
  };
});

function backend(over: Record<string, (req: never) => unknown> = {}) {
  invoke.mockImplementation(async (req: { cmd: string }) => {
    if (over[req.cmd]) return over[req.cmd](req as never);
    if (req.cmd === 'prompts') return [REVIEW];
    if (req.cmd === 'reviewerSettings') throw { code: 'internal', message: 'not in this test' };
    return null;
  });
}

beforeEach(() => {
  setLocale('en');
  backend();
});

afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockReset();
  onclose.mockReset();
  toasts.clear();
});

function field(target: HTMLElement): HTMLTextAreaElement {
  return target.querySelector<HTMLTextAreaElement>('[data-name="session.reviewSession.visible"] [data-testid="prompt-text"]')!;
}

function typeInto(el: HTMLTextAreaElement | HTMLInputElement, value: string, event = 'input') {
  el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  if (event !== 'input') el.dispatchEvent(new Event(event, { bubbles: true }));
  flushSync();
}

describe('prompt templates', () => {
  it('reads placeholders as the backend does', () => {
    expect(placeholdersIn('a {{ handoff }} b {{x-y}} {{handoff}} {{open')).toEqual(['handoff']);
    expect(templateProblem('no placeholder', ['handoff'])).toEqual({ kind: 'missing', name: 'handoff' });
    expect(templateProblem('{{handoff}} {{bogus}}', ['handoff'])).toEqual({ kind: 'unknown', name: 'bogus' });
    expect(templateProblem('{{handoff}}', ['handoff'])).toBeNull();
  });

  it('a template without its placeholder is refused at the field, naming it, and not sent', async () => {
    const target = await open();
    expect(target.querySelector('[data-name="session.reviewSession.visible"] .prompt-name')?.textContent).toBe(
      'First message of the review session',
    );
    typeInto(field(target), 'Please review this.');
    target.querySelector<HTMLButtonElement>('[data-name="session.reviewSession.visible"] [data-testid="prompt-save"]')!.click();
    await settle();
    const error = target.querySelector('[data-testid="prompt-error"]');
    expect(error?.textContent).toContain('must contain {{handoff}}');
    expect(field(target).getAttribute('aria-invalid')).toBe('true');
    expect(field(target).getAttribute('aria-describedby')).toBe(error?.id);
    expect(invoke.mock.calls.some((c) => (c[0] as { cmd: string }).cmd === 'setPrompt')).toBe(false);
    expect(toasts.items.some((t) => /reload the window/.test(t.text))).toBe(false);
    // Putting it back clears the message as the user types.
    typeInto(field(target), 'Please review this: {{handoff}}');
    expect(target.querySelector('[data-testid="prompt-error"]')).toBeNull();
  });

  it("the backend's own refusal is shown at the field too", async () => {
    backend({
      setPrompt: () => {
        throw { code: 'invalid_request', message: 'the template must contain {{handoff}}: without it the text it stands for is not sent' };
      },
    });
    const target = await open();
    typeInto(field(target), 'Changed: {{handoff}}');
    target.querySelector<HTMLButtonElement>('[data-name="session.reviewSession.visible"] [data-testid="prompt-save"]')!.click();
    await settle();
    expect(target.querySelector('[data-testid="prompt-error"]')?.textContent).toContain('{{handoff}}');
  });

  it('closing with an unsaved template warns first; closing again discards it', async () => {
    const target = await open();
    typeInto(field(target), 'Changed: {{handoff}}');
    const dialog = target.ownerDocument.querySelector('[data-testid="settings"]')!;
    dialog.dispatchEvent(new Event('cancel', { cancelable: true }));
    flushSync();
    expect(onclose).not.toHaveBeenCalled();
    expect(target.ownerDocument.querySelector('[data-testid="settings-unsaved"]')?.textContent).toContain('First message of the review session');
    dialog.dispatchEvent(new Event('cancel', { cancelable: true }));
    flushSync();
    expect(onclose).toHaveBeenCalledTimes(1);
  });
});

describe('the handoff time limit', () => {
  it('0 is refused at the field and the saved limit kept, not replaced silently', async () => {
    store.settings = { ...store.settings, handoffTimeoutMs: 30 * 60_000 };
    const target = await open();
    const input = target.querySelector<HTMLInputElement>('[data-testid="settings-handoff-timeout"]')!;
    typeInto(input, '0', 'change');
    await settle();
    expect(target.querySelector('[data-testid="settings-handoff-timeout-error"]')?.textContent).toContain('from 1 to 1440');
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(invoke.mock.calls.some((c) => (c[0] as { cmd: string }).cmd === 'setSettings')).toBe(false);
  });
});
