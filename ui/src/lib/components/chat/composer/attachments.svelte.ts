// The files attached in a composer: from the attach button, drag and drop, paste and `@`
// mentions; each checked against the limits before it is read, with a toast for a refusal.

import { checkFiles, mentionedFile, readFile, type ComposerFile } from '$lib/attachments';
import { t } from '$lib/i18n/index.svelte';
import { toasts } from '$lib/state/toasts.svelte';

function hasFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

/** The attached files of one composer. */
export class ComposerFiles {
  /** The files, in the order they were attached. */
  list: ComposerFile[] = $state([]);
  /** Files are being dragged over the box. */
  dragging = $state(false);

  constructor(initial: ComposerFile[]) {
    this.list = initial;
  }

  /** Checks and reads files the user picked, dropped or pasted; says why one cannot go. */
  async add(picked: File[]): Promise<void> {
    if (picked.length === 0) return;
    const problem = checkFiles(this.list, picked);
    if (problem) {
      toasts.push('error', t(problem.key, problem.params));
      return;
    }
    const read: ComposerFile[] = [];
    for (const file of picked) {
      try {
        read.push(await readFile(file));
      } catch (err) {
        toasts.push('error', t('attach.readFailed', { name: file.name }), err instanceof Error ? err.message : String(err));
      }
    }
    this.list = [...this.list, ...read];
  }

  /** Attaches a file of the session's folder named by an `@` mention (once). */
  mention(path: string): void {
    if (!this.list.some((f) => f.attachment.kind === 'file' && f.attachment.path === path)) {
      this.list = [...this.list, mentionedFile(path)];
    }
  }

  /** Removes one file. */
  remove(key: string): void {
    this.list = this.list.filter((f) => f.key !== key);
  }

  /** The file input's change: its files, then the input is emptied for the next pick. */
  onPicked = (event: Event): void => {
    const input = event.currentTarget as HTMLInputElement;
    const picked = Array.from(input.files ?? []);
    input.value = '';
    void this.add(picked);
  };

  /** A paste with files attaches them instead of pasting. */
  onPaste = (event: ClipboardEvent): void => {
    const pasted = Array.from(event.clipboardData?.files ?? []);
    if (pasted.length === 0) return;
    event.preventDefault();
    void this.add(pasted);
  };

  onDragOver = (event: DragEvent): void => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    this.dragging = true;
  };

  onDragLeave = (): void => {
    this.dragging = false;
  };

  onDrop = (event: DragEvent): void => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    this.dragging = false;
    void this.add(Array.from(event.dataTransfer?.files ?? []));
  };
}
