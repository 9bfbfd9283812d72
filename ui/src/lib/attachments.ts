// Files attached to a prompt: what the composer holds (content read into a data: URL, or a path
// of the session's folder from an `@` mention), the limits (the backend's, checked again there),
// which files can be attached at all (images, PDFs and text), and the `@` mention under the
// cursor.

import type { Attachment } from '$lib/types/Attachment';

const MB = 1024 * 1024;
// The backend's limits (a Rust test in the core's attachments module checks they agree).
/** The largest one file may be, in bytes. */
export const MAX_ATTACHMENT_BYTES = 10 * MB;
/** The most all files of one message may weigh together, in bytes. */
export const MAX_PROMPT_ATTACHMENT_BYTES = 25 * MB;
/** The most files one message may carry. */
export const MAX_ATTACHMENTS = 20;

/** One file in the composer: what is sent, and what its chip shows. */
export interface ComposerFile {
  /** Stable key for the chip list. */
  key: string;
  /** The name on the chip (a path for a mentioned file). */
  name: string;
  /** Decoded size in bytes (0 for a mentioned file: the server reads it). */
  size: number;
  /** An image's data: URL for its thumbnail. */
  preview?: string;
  /** What the backend gets. */
  attachment: Attachment;
}

/** Why a file cannot be attached, as an i18n key and its parameters. */
export interface AttachProblem {
  key: 'attach.tooLarge' | 'attach.tooLargeTotal' | 'attach.tooMany' | 'attach.unsupported' | 'attach.readFailed';
  params: Record<string, string | number>;
}

let counter = 0;
const nextKey = () => `f${++counter}-${Date.now().toString(36)}`;

/** Megabytes with one decimal. */
export function mb(bytes: number): string {
  return (bytes / MB).toFixed(1);
}

/** Text-like MIME types that are not `text/*`. */
const TEXT_TYPES = /^application\/(json|xml|javascript|x-javascript|typescript|x-sh|x-yaml|yaml|toml|x-toml|sql|graphql|x-httpd-php|ld\+json)$/;
/** Extensions of text files browsers often give no type (or a wrong one). */
const TEXT_EXTENSIONS =
  /\.(txt|md|markdown|rs|ts|tsx|js|jsx|mjs|cjs|svelte|vue|py|rb|go|java|kt|c|h|cc|cpp|hpp|cs|swift|sh|bash|zsh|fish|toml|yaml|yml|json|jsonc|xml|html|css|scss|sql|ini|cfg|conf|env|log|csv|tsv|diff|patch|lock|gitignore|dockerfile|makefile)$/i;

/** What kind of file this is for OpenCode: an image, a PDF, text, or nothing it can take. */
export function kindOf(file: { name: string; type: string }): 'image' | 'pdf' | 'text' | null {
  const type = file.type.toLowerCase();
  if (/^image\/(png|jpeg|gif|webp)$/.test(type)) return 'image';
  if (type === 'application/pdf') return 'pdf';
  if (type.startsWith('text/') || TEXT_TYPES.test(type)) return 'text';
  if (TEXT_EXTENSIONS.test(file.name) || /(^|\/)(Makefile|Dockerfile|LICENSE|README)$/i.test(file.name)) return 'text';
  return null;
}

/** Checks adding `files` to what the composer holds; the first problem, if any. */
export function checkFiles(held: ComposerFile[], files: { name: string; size: number; type: string }[]): AttachProblem | null {
  if (held.length + files.length > MAX_ATTACHMENTS) return { key: 'attach.tooMany', params: { limit: MAX_ATTACHMENTS } };
  let total = held.reduce((sum, f) => sum + f.size, 0);
  for (const file of files) {
    if (!kindOf(file)) return { key: 'attach.unsupported', params: { name: file.name || '?' } };
    if (file.size > MAX_ATTACHMENT_BYTES) {
      return { key: 'attach.tooLarge', params: { name: file.name, size: mb(file.size), limit: mb(MAX_ATTACHMENT_BYTES) } };
    }
    total += file.size;
  }
  if (total > MAX_PROMPT_ATTACHMENT_BYTES) {
    return { key: 'attach.tooLargeTotal', params: { size: mb(total), limit: mb(MAX_PROMPT_ATTACHMENT_BYTES) } };
  }
  return null;
}

/** Reads a picked, dropped or pasted file into a composer entry (text files go as text/plain). */
export function readFile(file: File): Promise<ComposerFile> {
  const kind = kindOf(file);
  const name = file.name || (kind === 'image' ? `pasted-image.${file.type.split('/')[1] ?? 'png'}` : 'pasted.txt');
  const mime = kind === 'text' ? 'text/plain' : file.type;
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(reader.error ?? new Error('read failed'));
    reader.onload = () => {
      const raw = String(reader.result ?? '');
      // The browser's own type goes in the URL; OpenCode reads the part's mime.
      const url = raw.replace(/^data:[^,]*?(;base64)?,/, `data:${mime};base64,`);
      resolve({
        key: nextKey(),
        name,
        size: file.size,
        preview: kind === 'image' ? url : undefined,
        attachment: { kind: 'data', filename: name, mime, url },
      });
    };
    reader.readAsDataURL(file);
  });
}

/** A file of the session's folder picked from the `@` menu. */
export function mentionedFile(path: string): ComposerFile {
  return { key: nextKey(), name: path, size: 0, attachment: { kind: 'file', path } };
}

/** The `@` mention the cursor is in: its query and where it starts and ends in the text. */
export interface Mention {
  query: string;
  start: number;
  end: number;
}

/** The `@word` right before the cursor (at the start or after a space), or null. */
export function mentionAt(text: string, caret: number): Mention | null {
  const before = text.slice(0, caret);
  const match = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!match) return null;
  const start = before.length - match[2].length - 1;
  return { query: match[2], start, end: caret };
}

/** The text with the mention replaced by `@path ` and the cursor after it. */
export function applyMention(text: string, mention: Mention, path: string): { text: string; caret: number } {
  const inserted = `@${path} `;
  const rest = text.slice(mention.end).replace(/^ /, '');
  return { text: text.slice(0, mention.start) + inserted + rest, caret: mention.start + inserted.length };
}
