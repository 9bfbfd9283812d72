// Panel tab labels that can be told apart: tabs whose titles are the same get the folder's
// name when their folders differ, else the end of the session id.

/** What a tab's label is made from. */
export interface TabLabelInput {
  key: string;
  label: string;
  directory?: string;
  sessionId?: string;
}

function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const i = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  return i >= 0 ? trimmed.slice(i + 1) || trimmed : trimmed;
}

/** The label of each tab by key, with a distinguishing suffix for tabs that share a title. */
export function distinctLabels(tabs: readonly TabLabelInput[]): Map<string, string> {
  const out = new Map<string, string>();
  const byLabel = new Map<string, TabLabelInput[]>();
  for (const tab of tabs) byLabel.set(tab.label, [...(byLabel.get(tab.label) ?? []), tab]);
  for (const [label, group] of byLabel) {
    if (group.length === 1) {
      out.set(group[0].key, label);
      continue;
    }
    const folders = group.map((tab) => (tab.directory ? baseName(tab.directory) : ''));
    const foldersDiffer = new Set(folders).size === group.length && folders.every((f) => f !== '');
    group.forEach((tab, i) => {
      const suffix = foldersDiffer ? folders[i] : tab.sessionId ? `#${tab.sessionId.slice(-4)}` : String(i + 1);
      out.set(tab.key, `${label} · ${suffix}`);
    });
  }
  return out;
}
