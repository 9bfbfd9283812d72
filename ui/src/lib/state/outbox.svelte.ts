// Messages typed while the OpenCode server is gone or while the agent works: kept (also across
// a reload) and sent, in order, once the connection is back and the session's turn has ended.

import type { ModelChoice } from '$lib/types/ModelChoice';
import { load, save } from './persist';

const KEY = 'crosscheck.outbox';

/** A message waiting for the connection. */
export interface Queued {
  id: string;
  sessionId: string;
  text: string;
  /** A server command (`/name args`) rather than a prompt. */
  command?: { name: string; args: string };
  choice?: ModelChoice;
  /** Typed while the agent worked: waits for the running turn to end (Stop cancels it). */
  afterTurn?: boolean;
}

class Outbox {
  items: Queued[] = $state(load<Queued[]>(KEY, []).filter((q) => q && typeof q.sessionId === 'string' && typeof q.text === 'string'));

  /** Queues a message; answers its id. */
  add(item: Omit<Queued, 'id'>): string {
    const id = `q-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
    this.items.push({ ...item, id });
    this.persist();
    return id;
  }

  /** The queued messages of a session, oldest first. */
  of(sessionId: string): Queued[] {
    return this.items.filter((q) => q.sessionId === sessionId);
  }

  /** Removes a queued message; answers it (null when it was not queued). */
  take(id: string): Queued | null {
    const i = this.items.findIndex((q) => q.id === id);
    if (i < 0) return null;
    const [item] = this.items.splice(i, 1);
    this.persist();
    return item;
  }

  /** Puts a message back at the front (its send failed while still offline). */
  putBack(item: Queued): void {
    this.items.unshift(item);
    this.persist();
  }

  private persist(): void {
    save(KEY, this.items.length ? $state.snapshot(this.items) : null);
  }
}

export const outbox = new Outbox();
