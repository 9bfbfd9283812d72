// Findings actions: loading a review link's findings, and sending the chosen findings of a
// reviewer's reply to the implementer (a transfer: the sent mark and "Send again?" apply).

import { HostError, copyText, invoke } from '$lib/host';
import { t } from '$lib/i18n/index.svelte';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import { reportError } from './call';
import { loadTransfers, type TransferOutcome } from './handoff';

/** Loads the findings of the link `sessionId` belongs to. Failures only log: the list shows
 * what the pushes bring. A push for the link that arrives while the load is on its way is
 * newer than the load's answer and is kept. */
export async function loadFindings(sessionId: string): Promise<void> {
  try {
    const started = store.findingsPushes;
    const view = await invoke({ cmd: 'listFindings', sessionId });
    if ((store.findingsPushedAt.get(view.reviewSessionId) ?? 0) > started) return;
    store.findings.set(view.reviewSessionId, view);
  } catch (err) {
    console.warn('could not load the findings', err);
  }
}

/** Sends findings `findingIds` of reviewer reply `messageId` to the implementer and says so.
 * A reply sent before goes again only with `resend`; without it the backend refuses and this
 * answers `alreadySent` (the caller asks). Other failures are toasts, rethrown. */
export async function sendFindings(
  reviewSessionId: string,
  messageId: string,
  findingIds: string[],
  resend = false,
): Promise<TransferOutcome> {
  try {
    const result = await invoke({
      cmd: 'sendFindings',
      reviewSessionId,
      messageId,
      findingIds,
      ...(resend ? { resend: true } : {}),
    });
    toasts.push('success', t('findings.sent', { ids: findingIds.join(', ') }));
    return { sent: result };
  } catch (err) {
    const e = HostError.from(err);
    if (e.code === 'already_transferred') {
      void loadTransfers(reviewSessionId);
      return { alreadySent: true };
    }
    throw reportError(e);
  }
}

/** Copies the review link's history as markdown (rounds, findings and how each ended,
 * coverage, the final verdict and the code it saw) and says so; answers the text copied. */
export async function copyReviewReport(sessionId: string): Promise<string | null> {
  try {
    const report = await invoke({ cmd: 'reviewReport', sessionId });
    if (report == null) return null;
    await copyText(report);
    toasts.push('success', t('findings.reportCopied'));
    return report;
  } catch (err) {
    toasts.push('error', t('findings.reportFailed', { message: HostError.from(err).message }));
    return null;
  }
}
