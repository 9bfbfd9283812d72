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
