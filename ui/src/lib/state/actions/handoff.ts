// Review handoff actions: starting it, cancelling a flow, transfers between linked sessions.

import { t } from '$lib/i18n/index.svelte';
import type { LoopBudget } from '$lib/types/LoopBudget';
import type { FlowState } from '$lib/types/FlowState';
import type { ModelChoice } from '$lib/types/ModelChoice';
import type { TransferResult } from '$lib/types/TransferResult';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import { HostError, invoke } from '$lib/host';
import { call, reportError } from './call';
import { cleanChoice } from './turns';

/** What a transfer came to: sent, or refused because the message was sent before (the caller
 * asks the user and calls again with `resend`). */
export type TransferOutcome = { sent: TransferResult } | { alreadySent: true };

/** Sends an assistant message's text to the linked session and says so. A message sent before
 * goes again only with `resend` (the user said yes); without it the backend refuses. */
export async function transfer(sessionId: string, messageId: string, resend = false): Promise<TransferOutcome> {
  let result: TransferResult;
  try {
    result = await invoke({ cmd: 'transfer', sessionId, messageId, ...(resend ? { resend: true } : {}) });
  } catch (err) {
    const e = HostError.from(err);
    if (e.code === 'already_transferred') {
      // Another window (or process) sent it meanwhile: its mark arrives as a change; fetch it too.
      void loadTransfers(sessionId);
      return { alreadySent: true };
    }
    throw reportError(e);
  }
  toasts.push(
    'success',
    t(result.direction === 'toImplementer' ? 'notice.transferSent.toImplementer' : 'notice.transferSent.toReviewer'),
  );
  return { sent: result };
}

/** Loads the sent marks of a session's messages. Failures only log: the marks are a hint. */
export async function loadTransfers(sessionId: string): Promise<void> {
  try {
    for (const record of await invoke({ cmd: 'listTransfers', sessionId })) store.recordTransfer(record);
  } catch (err) {
    console.warn('could not load the sent marks', err);
  }
}

/** Starts the review handoff (or joins the running one). */
export async function startHandoffReview(
  sessionId: string,
  choice?: ModelChoice,
  reviewer?: ModelChoice,
  loopRounds?: number,
  loopBudget?: LoopBudget,
): Promise<FlowState> {
  const c = cleanChoice(choice);
  const r = cleanChoice(reviewer);
  const flow = await call({
    cmd: 'startHandoffReview',
    sessionId,
    ...(c ? { choice: c } : {}),
    ...(r ? { reviewer: r } : {}),
    ...(loopRounds ? { reviewLoop: { maxRounds: loopRounds, ...(loopBudget ? { budget: loopBudget } : {}) } } : {}),
  });
  if (flow?.id) store.enqueueLocalFlow(flow);
  return flow;
}

/** Asks a flow to stop; resolves to whether it was still running. */
export function cancelFlow(flowId: string): Promise<boolean> {
  return call({ cmd: 'cancelFlow', flowId });
}

/** Checks what the review session's newest reply saw against the code now. Failures only log:
 * the mark is a hint, and the next file event or focus checks again. */
export async function checkReviewPin(sessionId: string): Promise<void> {
  try {
    const pin = await invoke({ cmd: 'checkReviewPin', sessionId });
    if (pin) store.recordPin(pin);
  } catch (err) {
    console.warn('could not check the review pin', err);
  }
}
