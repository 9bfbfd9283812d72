// Files attached to a prompt: what the composer holds (content read into a data: URL, or a path
// of the session's folder from an `@` mention), the limits (the backend's, checked again
// there), and which files can be attached at all: images, PDFs and text.

import type { Attachment } from '$lib/types/Attachment';

const MB = 1024 * 1024;
/** The largest one file may be (the backend's `MAX_ATTACHMENT_BYTES`), in MB. */
export const MAX_ATTACHMENT_MB = 10;
// Named as the backend names them (a Rust test checks they agree).
// MAX_ATTACHMENT_BYTES = 10 MB, MAX_PROMPT_ATTACHMENT_BYTES = 25 MB, MAX_ATTACHMENTS = 20
export const MAX_ATTACHMENT_BYTES = MAX_ATTACHMENT_MB * MB;
export const MAX_PROMPT_ATTACHMENT_BYTES = 25 * MB;
export const MAX_ATTACHMENTS = 20;
