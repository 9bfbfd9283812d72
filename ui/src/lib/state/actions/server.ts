// The OpenCode server: start it again, or attach to one at a URL.

import { call } from './call';

/** Starts (or attaches to) the same server again: the Retry button. */
export async function retryServer(): Promise<void> {
  await call({ cmd: 'reconnect' });
}

/** Attaches to the OpenCode server at `url` (with its password, if it has one). */
export async function attachServer(url: string, password: string): Promise<void> {
  const pw = password.trim();
  await call({ cmd: 'attachServer', url: url.trim(), ...(pw ? { password: pw } : {}) });
}
