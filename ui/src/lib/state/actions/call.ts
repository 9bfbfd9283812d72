// Sending requests from actions: failures become toasts (localized by code) and are rethrown.

import { HostError, invoke, type ResponseOf } from '$lib/host';
import { tError } from '$lib/i18n/index.svelte';
import type { Request } from '$lib/types/Request';
import { toasts } from '../toasts.svelte';

/** Shows an error as a toast: the localized text for its code, the English message as detail. */
export function reportError(err: unknown): HostError {
  const e = HostError.from(err);
  toasts.push('error', tError(e.code), e.message);
  return e;
}

/** Sends a request; its result type follows from the request. Failures are toasts, rethrown. */
export async function call<R extends Request>(request: R): Promise<ResponseOf<R>> {
  try {
    return await invoke(request);
  } catch (err) {
    throw reportError(err);
  }
}
