// Settings and prompt template actions.

import type { PromptTemplate } from '$lib/types/PromptTemplate';
import type { Settings } from '$lib/types/Settings';
import { store } from '../store.svelte';
import { invoke } from '$lib/host';
import { call } from './call';

/** Saves settings; the backend pushes them to every window too. */
export async function saveSettings(settings: Settings): Promise<void> {
  const saved = await call({ cmd: 'setSettings', settings });
  store.settings = saved ?? settings;
}

/** Every prompt template with its default. */
export function listPrompts(): Promise<PromptTemplate[]> {
  return call({ cmd: 'prompts' });
}

/** Overrides a prompt template; the caller shows a refusal (at the template's field). */
export function setPrompt(name: string, template: string): Promise<PromptTemplate> {
  return invoke({ cmd: 'setPrompt', name, template });
}

/** Resets a prompt template to its default. */
export function resetPrompt(name: string): Promise<PromptTemplate> {
  return call({ cmd: 'resetPrompt', name });
}
