// View state that is not the backend's: selection, panels, dialogs, filters.

import { SvelteSet } from 'svelte/reactivity';
import { load, save } from './persist';

const K = {
  selected: 'crosscheck.selectedSession',
  panelOpen: 'crosscheck.panelOpen',
  panelFraction: 'crosscheck.panelFraction',
  sidebarOpen: 'crosscheck.sidebarOpen',
  lastDirectory: 'crosscheck.lastDirectory',
  recentDirectories: 'crosscheck.recentDirectories',
  collapsed: 'crosscheck.collapsedGroups',
  showArchived: 'crosscheck.showArchived',
};

/** The side panel's narrowest width, px. */
export const PANEL_MIN = 320;
/** The chat in the centre never gets narrower than this while the panel sits beside it, px. */
export const CENTER_MIN = 400;
/** The session list's width, px (`--sidebar-w`). */
export const SIDEBAR_W = 272;
/** Below this window width the side panel floats over the chat instead of beside it, px. */
export const OVERLAY_BELOW = 1000;
/** The side panel's share of the window unless the user drags it. */
export const PANEL_FRACTION = 0.36;
/** Its largest share of the window. */
const PANEL_FRACTION_MAX = 0.7;
/** Room the floating panel leaves on its left, px. */
const OVERLAY_GAP = 40;

/** The side panel's width for a window: its fraction, clamped so both panes keep their minimum
 * widths (floating below [OVERLAY_BELOW], where only the window's edge limits it). */
export function panelWidthFor(fraction: number, viewport: number, sidebarOpen: boolean): number {
  const [min, max] = panelBounds(viewport, sidebarOpen);
  return Math.round(Math.min(max, Math.max(min, fraction * viewport)));
}

/** The narrowest and widest the side panel may be in a window, px. */
export function panelBounds(viewport: number, sidebarOpen: boolean): [number, number] {
  const room =
    viewport < OVERLAY_BELOW ? viewport - OVERLAY_GAP : viewport - (sidebarOpen ? SIDEBAR_W : 0) - CENTER_MIN;
  const max = Math.max(Math.min(room, viewport * PANEL_FRACTION_MAX), 0);
  return [Math.min(PANEL_MIN, max), max];
}

function clampFraction(fraction: number): number {
  return Number.isFinite(fraction) ? Math.min(PANEL_FRACTION_MAX, Math.max(0.05, fraction)) : PANEL_FRACTION;
}

function windowWidth(): number {
  return typeof window !== 'undefined' && window.innerWidth > 0 ? window.innerWidth : 1280;
}

class Ui {
  selectedSessionId: string | null = $state(load<string | null>(K.selected, null));
  panelOpen: boolean = $state(load(K.panelOpen, true));
  /** The side panel's share of the window width. */
  panelFraction: number = $state(clampFraction(load(K.panelFraction, PANEL_FRACTION)));
  /** The window's width, px (kept current by the app). */
  viewportWidth: number = $state(windowWidth());
  sidebarOpen: boolean = $state(load(K.sidebarOpen, true));
  showArchived: boolean = $state(load(K.showArchived, false));
  search: string = $state('');
  /** The sidebar's filter (All, Needs you, Running, Done). */
  sessionFilter: import('$lib/attention').SessionFilter = $state('all');
  readonly collapsedGroups = new SvelteSet<string>(load<string[]>(K.collapsed, []));
  /** The session rows the sidebar shows, top to bottom (collapsed groups left out): Alt+Up/Down
   * step through this, so they follow the tree, the held order and the server sections. */
  sidebarOrder: string[] = $state([]);
  lastDirectory: string = $state(load(K.lastDirectory, ''));
  recentDirectories: string[] = $state(load<string[]>(K.recentDirectories, []));

  settingsOpen: boolean = $state(false);
  newSessionOpen: boolean = $state(false);
  /** Session waiting for delete confirmation. */
  deleteSessionId: string | null = $state(null);
  /** Session whose /handoff-review dialog is open. */
  handoffSessionId: string | null = $state(null);
  /** Incremented to ask the centre's composer to take the focus (after New session). */
  focusComposer: number = $state(0);
  /** Incremented to ask the sidebar to focus its search box. */
  focusSearch: number = $state(0);
  /** Wall clock for relative times, ticking every 30 s. */
  now: number = $state(Date.now());
  /** The change stream to the backend is down. */
  streamLost: boolean = $state(false);
  /** Edit and resend: text for a session's composer and the earlier message it replaces. */
  editRequest: { sessionId: string; messageId: string; text: string } | null = $state(null);
  /** A message to bring into view once its session's chat shows it (the Reviews panel's Open). */
  revealRequest: { sessionId: string; messageId: string } | null = $state(null);

  select(sessionId: string | null): void {
    this.selectedSessionId = sessionId;
    save(K.selected, sessionId);
  }

  setPanelOpen(open: boolean): void {
    this.panelOpen = open;
    save(K.panelOpen, open);
  }

  /** Whether the side panel floats over the chat (a narrow window). */
  get panelOverlay(): boolean {
    return this.viewportWidth < OVERLAY_BELOW;
  }

  /** The side panel's width now, px. */
  get panelWidth(): number {
    return panelWidthFor(this.panelFraction, this.viewportWidth, this.sidebarOpen);
  }

  /** The side panel's width limits now, px. */
  get panelBounds(): [number, number] {
    return panelBounds(this.viewportWidth, this.sidebarOpen);
  }

  /** Sets the side panel's width (clamped), kept as a share of the window. */
  setPanelWidth(width: number): void {
    const [min, max] = this.panelBounds;
    const px = Math.min(max, Math.max(min, width));
    this.panelFraction = clampFraction(px / this.viewportWidth);
    save(K.panelFraction, this.panelFraction);
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

export const ui = new Ui();
