// Tool part renderers against the part shapes the real `opencode serve` stored for a scripted
// turn (tests/fixtures/tool-turn.json, recorded by tests/support/record-parts.mjs), plus the
// faults a user meets: missing metadata, huge output, failed and refused calls, unknown tools.
import fs from 'node:fs';
import path from 'node:path';
import { flushSync, mount, unmount } from 'svelte';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn(async () => null);
vi.mock('$lib/host', async (importOriginal) => {
  const actual = await importOriginal<typeof import('$lib/host')>();
  return { ...actual, invoke: (...args: unknown[]) => invoke(...(args as [])), copyText: vi.fn(async () => undefined) };
});

const { default: ToolPart } = await import('$lib/components/chat/ToolPart.svelte');
const { PartView } = await import('$lib/state/transcript.svelte');
const { store } = await import('$lib/state/store.svelte');
const { setLocale } = await import('$lib/i18n/index.svelte');
const { exitKind } = await import('$lib/parts');
const { default: PartItem } = await import('$lib/components/chat/PartItem.svelte');

type Part = import('$lib/types/Part').Part;
type SessionView = import('$lib/types/SessionView').SessionView;

const fixture = JSON.parse(fs.readFileSync(path.resolve(__dirname, 'fixtures/tool-turn.json'), 'utf8')) as {
  messages: { info: { sessionID: string }; parts: Part[] }[];
  children: SessionView[];
};
const toolParts = fixture.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool');
const sessionId = fixture.messages[0].info.sessionID;

/** The recorded part of a tool (the `nth` call of it), deep-copied so a test may change it. */
function recorded(tool: string, nth = 0): Part {
  const found = toolParts.filter((p) => p.tool === tool)[nth];
  if (!found) throw new Error(`no recorded ${tool} part #${nth}`);
  return structuredClone(found);
}

function state(part: Part): Record<string, unknown> {
  return part.state as Record<string, unknown>;
}

let app: ReturnType<typeof mount> | null = null;
afterEach(() => {
  if (app) unmount(app);
  app = null;
  document.body.innerHTML = '';
  invoke.mockClear();
});

beforeAll(() => {
  setLocale('en');
  const session = (id: string, parentID?: string): SessionView => ({
    id,
    slug: 's',
    projectID: 'global',
    directory: '/project',
    title: parentID ? 'Check the greeting (@general subagent)' : 'Tools',
    time: { created: 1, updated: 1 },
    ...(parentID ? { parentID } : {}),
  });
  store.sessions.set(sessionId, session(sessionId));
  for (const child of fixture.children) store.sessions.set(child.id, session(child.id, sessionId));
});

function render(part: Part) {
  const target = document.createElement('div');
  document.body.appendChild(target);
  app = mount(ToolPart, { target, props: { view: new PartView(part) } });
  flushSync();
  return target;
}

function rows(target: HTMLElement, kind: string): string[] {
  return [...target.querySelectorAll(`[data-testid="diff-line"][data-kind="${kind}"] td:last-child`)].map((td) => td.textContent ?? '');
}

describe('edit, write: the change as a diff', () => {
  it('write shows the new file as added lines, named relative to the session folder', () => {
    const target = render(recorded('write'));
    const root = target.querySelector('[data-testid="tool-part"]');
    expect(root?.getAttribute('data-kind')).toBe('diff');
    expect(target.textContent).toContain('src/greet.ts');
    expect(target.textContent).not.toContain('/project/src');
    expect(target.textContent).toContain('new file');
    expect(rows(target, 'add')).toEqual(['export function greet(name: string): string {', '  return `Hello, ${name}`;', '}']);
    expect(target.textContent).not.toContain('Wrote file successfully');
  });

  it('edit shows its own diff from the metadata: one line out, one in', () => {
    const target = render(recorded('edit'));
    expect(target.querySelector('[data-testid="diff-counts"]')?.textContent?.replace(/\s+/g, '')).toBe('+1−1');
    expect(rows(target, 'del')).toEqual(['  return `Hello, ${name}`;']);
    expect(rows(target, 'add')).toEqual(['  return `Hello there, ${name}!`;']);
    expect(target.textContent).not.toContain('Edit applied successfully');
    expect(target.querySelector('[data-testid="diff-file"] .path')?.textContent).toBe('src/greet.ts');
    expect(target.textContent).not.toContain('\\n');
  });

  it('edit without metadata (still running, or an older server) diffs its input', () => {
    const part = recorded('edit');
    const s = state(part);
    s.status = 'running';
    delete s.metadata;
    delete s.output;
    const target = render(part);
    expect(rows(target, 'del')).toEqual(['Hello, ${name}']);
    expect(rows(target, 'add')).toEqual(['Hello there, ${name}!']);
  });

  it('a failed edit says why, with no diff', () => {
    const target = render(recorded('edit', 1));
    const failure = target.querySelector('[data-testid="tool-failure"]');
    expect(failure?.getAttribute('data-kind')).toBe('error');
    expect(failure?.textContent).toContain('Failed:');
    expect(failure?.textContent).toContain('Could not find oldString in the file');
    expect(target.querySelector('[data-testid="diff-view"]')).toBeNull();
  });
});

describe('bash: the command and its output', () => {
  it('shows the command, colours from ANSI and the last lines of long output', () => {
    const target = render(recorded('bash'));
    expect(target.querySelector('[data-testid="bash-command"]')?.textContent).toBe("$ printf '\\033[32mok\\033[0m build\\n'; seq 1 300");
    expect(target.textContent).toContain('Build and count');
    const out = target.querySelector('[data-testid="ansi-output"] pre');
    // 301 lines: the first (coloured) is folded away at first.
    expect(out?.textContent?.split('\n')).toEqual(Array.from({ length: 20 }, (_, i) => String(281 + i)));
    const more = target.querySelector<HTMLButtonElement>('[data-testid="output-show-all"]');
    expect(more?.textContent).toContain('281 earlier lines hidden');
    more?.click();
    flushSync();
    const green = [...target.querySelectorAll<HTMLElement>('[data-testid="ansi-output"] pre span')].find((s) => s.textContent === 'ok');
    expect(green?.style.color).toBe('rgb(0, 187, 0)');
    expect(out?.textContent?.startsWith('ok build\n1\n2\n')).toBe(true);
    expect(out?.textContent).not.toContain('\u001b');
  });

  it('says when a command failed with its exit code, once, in red', () => {
    const target = render(recorded('bash', 1));
    expect(target.querySelector('[data-testid="tool-failure"]')?.textContent).toContain('The command exited with code 3.');
    expect(target.querySelector('[data-testid="tool-status"]')?.getAttribute('data-status')).toBe('failed');
    expect(target.querySelector('.ok')).toBeNull();
    expect(target.textContent).toContain('No output.');
  });

  it('a search that found nothing (grep exit 1) is neither a green check nor a failure', () => {
    const part = recorded('bash', 1);
    const st = state(part);
    st.input = { ...(st.input as object), command: 'cd src && grep -rn "no such text" .' };
    st.metadata = { ...(st.metadata as object), exit: 1, output: '' };
    const target = render(part);
    expect(target.querySelector('.ok')).toBeNull();
    expect(target.querySelector('[data-testid="tool-failure"]')).toBeNull();
    expect(target.querySelector('[data-testid="tool-status"]')?.getAttribute('data-status')).toBe('answer');
    expect(target.querySelector('[data-testid="tool-exit"]')?.textContent).toBe('exit 1: nothing matched');
    expect(exitKind('grep x | wc -l', 1)).toBe('failed');
    expect(exitKind('FOO=1 rg x', 1)).toBe('answer');
    expect(exitKind('grep x', 2)).toBe('failed');
  });

  it("OpenCode's bookkeeping patch part after a step that changed files is not shown", () => {
    const target = document.createElement('div');
    document.body.appendChild(target);
    const patch = { id: 'prt_patch', sessionID: 'ses_x', messageID: 'msg_x', type: 'patch', hash: 'abc123', files: ['/p/src/a.ts'] } as unknown as Part;
    app = mount(PartItem, { target, props: { view: new PartView(patch) } });
    flushSync();
    expect(target.querySelector('[data-testid="generic-part"]')).toBeNull();
    expect(target.textContent?.trim()).toBe('');
  });

  it('says plainly when a permission rule refused the call', () => {
    const target = render(recorded('bash', 2));
    const failure = target.querySelector('[data-testid="tool-failure"]');
    expect(failure?.getAttribute('data-kind')).toBe('denied');
    expect(failure?.textContent?.trim()).toBe('Not run: a permission rule does not allow this call.');
  });

  it('says so when the user rejected the permission', () => {
    const part = recorded('bash', 2);
    state(part).error = 'The user rejected permission to use this specific tool call.';
    const target = render(part);
    expect(target.querySelector('[data-testid="tool-failure"]')?.textContent?.trim()).toBe('Not run: the permission was rejected.');
  });

  it('renders huge output without building it all', () => {
    const part = recorded('bash');
    const huge = Array.from({ length: 200_000 }, (_, i) => `\u001b[31mline ${i}\u001b[0m`).join('\n');
    const s = state(part);
    (s.metadata as Record<string, unknown>).output = huge;
    s.output = huge;
    const start = performance.now();
    const target = render(part);
    const took = performance.now() - start;
    const shown = target.querySelector('[data-testid="ansi-output"] pre')?.textContent?.split('\n') ?? [];
    expect(shown).toHaveLength(20);
    expect(shown[19]).toBe('line 199999');
    expect(target.querySelectorAll('[data-testid="ansi-output"] pre span').length).toBeLessThan(50);
    expect(took).toBeLessThan(1000);
  });

  it('shows streamed output while the command runs', () => {
    const part = recorded('bash');
    const s = state(part);
    s.status = 'running';
    (s.metadata as Record<string, unknown>).output = 'compiling…\n';
    delete s.output;
    const target = render(part);
    expect(target.querySelector('[data-testid="tool-part"]')?.getAttribute('data-status')).toBe('running');
    expect(target.querySelector('[data-testid="ansi-output"]')?.textContent).toContain('compiling…');
  });
});

describe('read, grep, glob: one line each', () => {
  it('says what was read or searched and how much came back', () => {
    expect(render(recorded('read')).querySelector('[data-testid="tool-line"]')?.textContent).toBe('Read src/greet.ts (3 lines)');
    unmount(app as ReturnType<typeof mount>);
    expect(render(recorded('grep')).querySelector('[data-testid="tool-line"]')?.textContent).toBe('Searched for greet: 1 matches');
    unmount(app as ReturnType<typeof mount>);
    const target = render(recorded('glob'));
    expect(target.querySelector('[data-testid="tool-line"]')?.textContent).toBe('Listed files matching **/*.ts: 1 files');
    // The output is there on demand.
    const details = target.querySelector('details');
    (details as HTMLDetailsElement).open = true;
    details?.dispatchEvent(new Event('toggle'));
    flushSync();
    expect(target.textContent).toContain('/project/src/greet.ts');
    app = null;
  });
});

describe('todowrite: a checklist', () => {
  it('lists the todos with their status, done ones checked', () => {
    const target = render(recorded('todowrite'));
    const items = [...target.querySelectorAll('[data-testid="todo-item"]')];
    expect(items.map((li) => [li.getAttribute('data-status'), li.querySelector('.content')?.textContent])).toEqual([
      ['completed', 'Write greet()'],
      ['in_progress', 'Test greet()'],
      ['pending', 'Document it'],
    ]);
    const boxes = items.map((li) => li.querySelector('input') as HTMLInputElement);
    expect(boxes.map((b) => [b.checked, b.disabled])).toEqual([
      [true, true],
      [false, true],
      [false, true],
    ]);
    expect(target.textContent).not.toContain('"content"');
  });

  it('falls back to the input when the metadata is missing, and to the generic view when both are', () => {
    const part = recorded('todowrite');
    delete state(part).metadata;
    let target = render(part);
    expect(target.querySelectorAll('[data-testid="todo-item"]')).toHaveLength(3);
    unmount(app as ReturnType<typeof mount>);
    delete (state(part).input as Record<string, unknown>).todos;
    target = render(part);
    app = null;
    expect(target.querySelector('[data-testid="tool-part"]')?.getAttribute('data-kind')).toBe('generic');
  });
});

describe('task: a card that opens the child session', () => {
  it('shows the job and result, and opens the child session in the side panel', () => {
    const part = recorded('task');
    const child = String((state(part).metadata as Record<string, unknown>).sessionId);
    const target = render(part);
    const card = target.querySelector('[data-testid="task-card"]');
    expect(card?.getAttribute('data-session-id')).toBe(child);
    expect(card?.textContent).toContain('Check the greeting');
    expect(card?.textContent).toContain('Agent: general');
    expect(card?.textContent).toContain('It greets.');
    expect(card?.textContent).not.toContain('<task');
    const open = target.querySelector<HTMLButtonElement>('[data-testid="task-open"]');
    expect(open?.getAttribute('aria-label')).toBe('Open the subagent session “Check the greeting” in the side panel');
    open?.click();
    expect(invoke).toHaveBeenCalledWith(
      expect.objectContaining({ cmd: 'openTab', tab: expect.objectContaining({ mode: 'chat', sessionId: child, dedupeKey: `session:${child}` }) }),
    );
  });

  it('finds the child from the output when the metadata is missing', () => {
    const part = recorded('task');
    const child = String((state(part).metadata as Record<string, unknown>).sessionId);
    delete state(part).metadata;
    const target = render(part);
    expect(target.querySelector('[data-testid="task-card"]')?.getAttribute('data-session-id')).toBe(child);
  });
});

describe('unknown tools', () => {
  it('keep the generic view with input and output on demand', () => {
    const part = recorded('glob');
    part.tool = 'webfetch';
    const target = render(part);
    const root = target.querySelector<HTMLDetailsElement>('[data-testid="tool-part"]');
    expect(root?.getAttribute('data-kind')).toBe('generic');
    expect(root?.querySelector('.name')?.textContent).toBe('webfetch');
    expect(root?.open).toBe(false);
  });
});
