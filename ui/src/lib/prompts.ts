// Prompt templates as the settings edit them: the `{{name}}` placeholders a template uses, and
// why a template cannot be saved (read the same way as the backend, which checks again).

/** Placeholder names in a template, in order of first use (`{{ name }}`: letters, digits, `_`). */
export function placeholdersIn(template: string): string[] {
  const out: string[] = [];
  let rest = template;
  for (;;) {
    const start = rest.indexOf('{{');
    if (start < 0) break;
    const after = rest.slice(start + 2);
    const end = after.indexOf('}}');
    if (end < 0) break;
    const name = after.slice(0, end).trim();
    if (/^[A-Za-z0-9_]+$/.test(name) && !out.includes(name)) out.push(name);
    rest = after.slice(end + 2);
  }
  return out;
}

/** Why a template cannot stand in for one taking `known` placeholders, or null when it can: a
 * placeholder it lacks (its text would be sent nowhere), or one the flow never fills. */
export type TemplateProblem = { kind: 'missing'; name: string } | { kind: 'unknown'; name: string };

/** The first problem of `template`, or null. */
export function templateProblem(template: string, known: readonly string[]): TemplateProblem | null {
  const used = placeholdersIn(template);
  const missing = known.find((p) => !used.includes(p));
  if (missing) return { kind: 'missing', name: missing };
  const unknown = used.find((p) => !known.includes(p));
  if (unknown) return { kind: 'unknown', name: unknown };
  return null;
}
