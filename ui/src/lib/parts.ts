// Reading the loosely typed parts of the server's data (tool state, message errors).

export interface ToolInfo {
  status: string;
  title: string;
  input: string;
  output: string;
  error: string;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** Status, title, input and output of a tool part's `state`. */
export function toolInfo(state: unknown): ToolInfo {
  const s = asRecord(state) ?? {};
  const input = asRecord(s.input);
  return {
    status: typeof s.status === 'string' ? s.status : 'pending',
    title: typeof s.title === 'string' ? s.title : '',
    input: input && Object.keys(input).length === 0 ? '' : asText(s.input),
    output: asText(s.output),
    error: asText(s.error),
  };
}

/** A readable line for an assistant message's `error` (`{name, data: {message}}` in OpenCode). */
/** Whether a message's error is OpenCode's report that the user stopped the turn
 * (`MessageAbortedError`): shown as "Stopped", not as a failure. */
export function isAbortError(error: unknown): boolean {
  const e = asRecord(error);
  return typeof e?.name === 'string' && /^MessageAbortedError$|^AbortError$/.test(e.name);
}

export function describeError(error: unknown): string {
  if (!error) return '';
  if (typeof error === 'string') return error;
  const e = asRecord(error);
  if (!e) return String(error);
  const data = asRecord(e.data);
  const message = typeof data?.message === 'string' ? data.message : typeof e.message === 'string' ? e.message : '';
  const name = typeof e.name === 'string' ? e.name : '';
  if (name && message) return `${name}: ${message}`;
  return message || name || asText(error);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Commands whose exit code 1 answers a question ("nothing matched", "they differ") rather
 * than reporting a failure. */
const ANSWERING_COMMANDS = new Set(['grep', 'egrep', 'fgrep', 'rg', 'ag', 'diff', 'cmp', 'test', '[']);

/** How a command's exit code reads: `ok` (0 or unknown), `answer` (exit 1 of a search or a
 * comparison: nothing matched), `failed` (anything else). The command's last step decides
 * (`a && b | grep x` exits with `grep`'s code). */
export function exitKind(command: string, exit: number | null): 'ok' | 'answer' | 'failed' {
  if (exit === null || exit === 0) return 'ok';
  const last = command.split(/&&|\|\||;|\|/).pop()?.trim() ?? '';
  const words = last.split(/\s+/).filter((w) => !/^\w+=/.test(w) && w !== 'sudo' && w !== 'command');
  const name = (words[0] ?? '').split('/').pop() ?? '';
  return exit === 1 && ANSWERING_COMMANDS.has(name) ? 'answer' : 'failed';
}

/** A todo item as `todowrite` sends it. */
export interface TodoItem {
  content: string;
  /** `pending`, `in_progress`, `completed` or `cancelled` (others kept as sent). */
  status: string;
  priority: string;
}

/** What a tool call did, in the shape its renderer needs. Built from the tool's own input and
 * metadata; anything missing falls back to a less specific view, never to an error. */
export type ToolView =
  | { kind: 'diff'; path: string; patch?: string; before?: string; after?: string; created: boolean }
  | { kind: 'bash'; command: string; description: string; output: string; exit: number | null }
  | { kind: 'compact'; verb: 'read' | 'grep' | 'glob' | 'list'; target: string; count: number | null }
  | { kind: 'todos'; todos: TodoItem[] }
  | { kind: 'task'; description: string; agent: string; sessionId: string; result: string }
  | { kind: 'generic' };

/** Tools whose change is a diff of a file. */
const EDIT_TOOLS = new Set(['edit', 'write', 'patch', 'apply_patch', 'multiedit']);

/** The renderer's view of a tool part (`tool` is the part's tool name, `state` its state). */
export function toolView(tool: string, state: unknown): ToolView {
  const s = asRecord(state) ?? {};
  const input = asRecord(s.input) ?? {};
  const meta = asRecord(s.metadata) ?? {};
  if (EDIT_TOOLS.has(tool)) {
    const filediff = asRecord(meta.filediff);
    const path = str(input.filePath) || str(filediff?.file) || str(meta.filepath) || str(s.title);
    const patch = str(filediff?.patch) || str(meta.diff);
    if (patch) return { kind: 'diff', path, patch, created: false };
    if (tool === 'write' && typeof input.content === 'string') {
      // A new file is all added; an overwritten one has no "before" in the metadata.
      return { kind: 'diff', path, before: '', after: input.content, created: meta.exists !== true };
    }
    if (tool === 'edit' && typeof input.oldString === 'string' && typeof input.newString === 'string') {
      return { kind: 'diff', path, before: input.oldString, after: input.newString, created: false };
    }
    return { kind: 'generic' };
  }
  switch (tool) {
    case 'bash':
      return {
        kind: 'bash',
        command: str(input.command),
        description: str(input.description),
        output: str(meta.output) || str(s.output),
        exit: num(meta.exit),
      };
    case 'read':
      return { kind: 'compact', verb: 'read', target: str(input.filePath) || str(s.title), count: num(asRecord(meta.display)?.totalLines) };
    case 'grep':
      return { kind: 'compact', verb: 'grep', target: str(input.pattern), count: num(meta.matches) };
    case 'glob':
      return { kind: 'compact', verb: 'glob', target: str(input.pattern), count: num(meta.count) };
    case 'list':
      return { kind: 'compact', verb: 'list', target: str(input.path) || str(s.title), count: num(meta.count) };
    case 'todowrite': {
      const list = Array.isArray(meta.todos) ? meta.todos : Array.isArray(input.todos) ? input.todos : null;
      if (!list) return { kind: 'generic' };
      const todos = list
        .map(asRecord)
        .filter((t): t is Record<string, unknown> => t !== null)
        .map((t) => ({ content: str(t.content), status: str(t.status) || 'pending', priority: str(t.priority) }));
      return { kind: 'todos', todos };
    }
    case 'task': {
      const output = str(s.output);
      const m = /<task_result>\n?([\s\S]*?)\n?<\/task_result>/.exec(output);
      const id = str(meta.sessionId) || (/<task id="(ses_[^"]+)"/.exec(output)?.[1] ?? '');
      return {
        kind: 'task',
        description: str(input.description) || str(s.title),
        agent: str(input.subagent_type),
        sessionId: id,
        result: m ? m[1].trim() : '',
      };
    }
    default:
      return { kind: 'generic' };
  }
}

/** Why a tool call did not run or failed, said plainly: a permission rule denied it, the user
 * rejected it, or it failed with the tool's error. Null while it runs or when it worked. */
export function toolFailure(state: unknown): { kind: 'denied' | 'rejected' | 'error'; message: string } | null {
  const s = asRecord(state) ?? {};
  if (s.status !== 'error') return null;
  const message = asText(s.error);
  if (/specified a rule which prevents you/i.test(message)) return { kind: 'denied', message };
  if (/rejected permission|user dismissed|permission.*(rejected|denied)/i.test(message)) return { kind: 'rejected', message };
  return { kind: 'error', message };
}

/** The workspace-relative form of a path when it lies under `directory`. */
export function relativePath(path: string, directory: string | undefined): string {
  if (!directory || !path) return path;
  const dir = directory.endsWith('/') ? directory : `${directory}/`;
  return path.startsWith(dir) ? path.slice(dir.length) : path;
}
