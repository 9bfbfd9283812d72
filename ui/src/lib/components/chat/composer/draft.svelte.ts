// A composer's draft: its text, files and the message it is editing are kept per session as
// they change (see `$lib/state/drafts`), and an edit request (a user message's text coming back
// to be edited and resent) is taken by the composer of its session.

import type { ComposerFile } from '$lib/attachments';
import { setDraft, setDraftEdit, setDraftFiles } from '$lib/state/drafts';
import { ui } from '$lib/state/ui.svelte';

/** What a composer's draft is made of. */
export interface DraftParts {
  text: () => string;
  files: () => ComposerFile[];
  editing: () => string | undefined;
}

/** Keeps the composer's draft for its session as it changes; call while it initialises. */
export function keepDraft(sessionId: () => string, draft: DraftParts): void {
  $effect(() => {
    setDraft(sessionId(), draft.text());
  });
  $effect(() => {
    setDraftFiles(sessionId(), draft.files());
  });
  $effect(() => {
    setDraftEdit(sessionId(), draft.editing());
  });
}

/** Hands the composer the edit requests meant for its session; call while it initialises. */
export function takeEditRequests(sessionId: () => string, take: (text: string, messageId: string) => void): void {
  $effect(() => {
    const request = ui.editRequest;
    if (!request || request.sessionId !== sessionId()) return;
    ui.editRequest = null;
    take(request.text, request.messageId);
  });
}
