// The OpenCode servers: start one again, attach to one at a URL, add, rename, reconnect or remove
// one, and where their passwords are kept.

import { invoke } from '$lib/host';
import type { PasswordStorage } from '$lib/types/PasswordStorage';
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

/** Adds an attached server beside the others (saved; the same address twice is refused).
 * A refusal is thrown, not shown as a toast: the form shows it beside the address. */
export async function addServer(url: string, password: string, name: string): Promise<void> {
  const pw = password.trim();
  const n = name.trim();
  await invoke({ cmd: 'addServer', url: url.trim(), ...(pw ? { password: pw } : {}), ...(n ? { name: n } : {}) });
}

/** Starts `opencode serve` in a folder and follows it (saved; one server per folder). A refusal
 * is thrown, not shown as a toast: the form shows it. */
export async function addManagedServer(folder: string, name: string): Promise<void> {
  const n = name.trim();
  await invoke({ cmd: 'addManagedServer', folder: folder.trim(), ...(n ? { name: n } : {}) });
}

/** Starts following one server anew. */
export async function reconnectServer(serverId: string): Promise<void> {
  await call({ cmd: 'reconnectServer', serverId });
}

/** Stops following a server and forgets it. */
export async function removeServer(serverId: string): Promise<void> {
  await call({ cmd: 'removeServer', serverId });
}

/** Renames a server (saved across a restart when it is in the saved list). */
export async function renameServer(serverId: string, name: string): Promise<void> {
  await call({ cmd: 'renameServer', serverId, name: name.trim() });
}

/** Where saved servers' passwords are kept: the system keyring, or a file only the user can read. */
export async function passwordStorage(): Promise<PasswordStorage> {
  return await invoke({ cmd: 'passwordStorage' });
}
