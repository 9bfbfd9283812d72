// A test reporter that prints nothing while the tests run and, at the end, each failed test
// with its error: the reasons sit beside the totals, where a reader of a long run's tail looks,
// instead of somewhere in the middle of the run's output. Used next to the TAP reporter.

/** Error text of a failure, its cause unwrapped, cut to a readable length. */
function reason(error) {
  const inner = error?.cause ?? error;
  const text = inner?.message ?? String(inner ?? 'failed');
  return text.length > 1200 ? `${text.slice(0, 1200)}…` : text;
}

/** The node:test reporter: collects `test:fail` events and reports them once the run is over. */
export default async function* failuresLast(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A file's own entry fails with its tests; its tests are the news.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failed.push({ name, file, why: reason(details?.error) });
  }
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed:\n`;
  for (const f of failed) {
    const where = f.file ? ` (${f.file.split('/').slice(-2).join('/')})` : '';
    const lines = f.why.split('\n').filter((line) => line.trim() !== '');
    yield `# - ${f.name}${where}\n#     ${lines.join('\n#     ')}\n`;
  }
}
