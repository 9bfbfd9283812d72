// Review handoff actions: starting it, cancelling a flow, transfers between linked sessions.

import { t } from '$lib/i18n/index.svelte';
import type { FlowState } from '$lib/types/FlowState';
import type { ModelChoice } from '$lib/types/ModelChoice';
import type { TransferResult } from '$lib/types/TransferResult';
import { store } from '../store.svelte';
import { toasts } from '../toasts.svelte';
import { call } from './call';
import { cleanChoice } from './turns';

/** Sends an assistant message's text to the linked session and says so. */
export async function transfer(sessionId: string, messageId: string): Promise<TransferResult> {
  const result = await call({ cmd: 'transfer', sessionId, messageId });
  toasts.push(
    'success',
    t(result.direction === 'toImplementer' ? 'notice.transferSent.toImplementer' : 'notice.transferSent.toReviewer'),
  );
  return result;
}

/** Starts the review handoff (or joins the running one). */
export async function startHandoffReview(sessionId: string, choice?: ModelChoice, reviewer?: ModelChoice): Promise<FlowState> {
  const c = cleanChoice(choice);
  const r = cleanChoice(reviewer);
  const flow = await call({
    cmd: 'startHandoffReview',
    sessionId,
    ...(c ? { choice: c } : {}),
    ...(r ? { reviewer: r } : {}),
  });
  if (flow?.id) store.enqueueLocalFlow(flow);
  return flow;
}

/** Asks a flow to stop; resolves to whether it was still running. */
export function cancelFlow(flowId: string): Promise<boolean> {
  return call({ cmd: 'cancelFlow', flowId });
}
