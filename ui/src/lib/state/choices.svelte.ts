// Model, agent and variant per session: the session's own (its last user message, else the
// session's model) unless the user picked something else, which is remembered per session.

import { SvelteMap } from 'svelte/reactivity';
import type { ModelChoice } from '$lib/types/ModelChoice';
import type { Session } from '$lib/types/Session';
import { load, save } from './persist';
import type { Transcript } from './transcript.svelte';

const key = (sessionId: string) => `crosscheck.choice.${sessionId}`;

class Choices {
  private readonly picked = new SvelteMap<string, ModelChoice>();
  /** Picks read from localStorage (not reactive: they only change through `set`). */
  private readonly stored = new Map<string, ModelChoice | null>();

  /** What the user picked for a session, if anything. */
  picks(sessionId: string): ModelChoice | undefined {
    const live = this.picked.get(sessionId);
    if (live) return live;
    if (!this.stored.has(sessionId)) this.stored.set(sessionId, load<ModelChoice | null>(key(sessionId), null));
    return this.stored.get(sessionId) ?? undefined;
  }

  set(sessionId: string, choice: ModelChoice): void {
    this.picked.set(sessionId, choice);
    save(key(sessionId), choice);
  }

  /** The choice the next turn uses. */
  effective(session: Session | undefined, transcript: Transcript | undefined): ModelChoice {
    const base = defaultChoice(session, transcript);
    const picked = session ? this.picks(session.id) : undefined;
    return picked ? { ...base, ...picked } : base;
  }
}

/** The session's current model/agent/variant: its last user message, else the session's. */
export function defaultChoice(session: Session | undefined, transcript: Transcript | undefined): ModelChoice {
  const choice: ModelChoice = {};
  const last = transcript?.lastUserMessage()?.info;
  if (last?.model?.providerID && last.model.modelID) choice.model = { providerID: last.model.providerID, modelID: last.model.modelID };
  else if (session?.model?.providerID && session.model.id) choice.model = { providerID: session.model.providerID, modelID: session.model.id };
  const agent = last?.agent ?? session?.agent;
  if (agent) choice.agent = agent;
  const variant = last ? last.variant : session?.model?.variant;
  if (variant) choice.variant = variant;
  return choice;
}

export const choices = new Choices();
