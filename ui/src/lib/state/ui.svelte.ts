// View state that is not the backend's: selection, panels, dialogs, filters.

import { SvelteSet } from 'svelte/reactivity';
import { load, save } from './persist';

const K = {
  selected: 'crosscheck.selectedSession',
  panelOpen: 'crosscheck.panelOpen',
  panelWidth: 'crosscheck.panelWidth',
  sidebarOpen: 'crosscheck.sidebarOpen',
  lastDirectory: 'crosscheck.lastDirectory',
  recentDirectories: 'crosscheck.recentDirectories',
  collapsed: 'crosscheck.collapsedGroups',
  showArchived: 'crosscheck.showArchived',
};

export const PANEL_MIN = 280;
export const PANEL_MAX = 1100;

class Ui {
  selectedSessionId: string | null = $state(load<string | null>(K.selected, null));
  panelOpen: boolean = $state(load(K.panelOpen, true));
  panelWidth: number = $state(clampPanel(load(K.panelWidth, 440)));
  sidebarOpen: boolean = $state(load(K.sidebarOpen, true));
  showArchived: boolean = $state(load(K.showArchived, false));
  search: string = $state('');
  readonly collapsedGroups = new SvelteSet<string>(load<string[]>(K.collapsed, []));
  lastDirectory: string = $state(load(K.lastDirectory, ''));
  recentDirectories: string[] = $state(load<string[]>(K.recentDirectories, []));

  settingsOpen: boolean = $state(false);
  newSessionOpen: boolean = $state(false);
  /** Session waiting for delete confirmation. */
  deleteSessionId: string | null = $state(null);
  /** Session whose /handoff-review dialog is open. */
  handoffSessionId: string | null = $state(null);
  /** Incremented to ask the sidebar to focus its search box. */
  focusSearch: number = $state(0);
  /** Wall clock for relative times, ticking every 30 s. */
  now: number = $state(Date.now());
  /** The change stream to the backend is down. */
  streamLost: boolean = $state(false);
  /** Edit and resend: text for a session's composer and the earlier message it replaces. */
  editRequest: { sessionId: string; messageId: string; text: string } | null = $state(null);

  select(sessionId: string | null): void {
    this.selectedSessionId = sessionId;
    save(K.selected, sessionId);
  }

  setPanelOpen(open: boolean): void {
    this.panelOpen = open;
    save(K.panelOpen, open);
  }

  setPanelWidth(width: number): void {
    this.panelWidth = clampPanel(width);
    save(K.panelWidth, this.panelWidth);
  }

  setSidebarOpen(open: boolean): void {
    this.sidebarOpen = open;
    save(K.sidebarOpen, open);
  }

  setShowArchived(show: boolean): void {
    this.showArchived = show;
    save(K.showArchived, show);
  }

  toggleGroup(directory: string): void {
    if (this.collapsedGroups.has(directory)) this.collapsedGroups.delete(directory);
    else this.collapsedGroups.add(directory);
    save(K.collapsed, [...this.collapsedGroups]);
  }

  rememberDirectory(directory: string): void {
    this.lastDirectory = directory;
    this.recentDirectories = [directory, ...this.recentDirectories.filter((d) => d !== directory)].slice(0, 8);
    save(K.lastDirectory, directory);
    save(K.recentDirectories, this.recentDirectories);
  }
}

function clampPanel(width: number): number {
  return Math.round(Math.min(PANEL_MAX, Math.max(PANEL_MIN, Number.isFinite(width) ? width : 440)));
}

export const ui = new Ui();
