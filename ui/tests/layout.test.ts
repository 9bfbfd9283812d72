import { describe, expect, it } from 'vitest';
import { CENTER_MIN, OVERLAY_BELOW, PANEL_MIN, SIDEBAR_W, panelBounds, panelWidthFor } from '$lib/state/ui.svelte';

describe('side panel width', () => {
  it('is a share of the window, clamped so both panes keep their minimum widths', () => {
    expect(panelWidthFor(0.36, 1600, true)).toBe(576);
    expect(panelWidthFor(0.36, 1280, true)).toBe(461);
    // Too wide a share: the centre keeps its minimum.
    expect(panelWidthFor(0.7, 1280, true)).toBe(1280 - SIDEBAR_W - CENTER_MIN);
    expect(panelWidthFor(0.7, 1280, false)).toBe(1280 - CENTER_MIN);
    // Too narrow a share: the panel keeps its minimum.
    expect(panelWidthFor(0.05, 1280, true)).toBe(PANEL_MIN);
    // Right at the overlay threshold there is still room for both minimums beside the list.
    const [min, max] = panelBounds(OVERLAY_BELOW, true);
    expect(min).toBe(PANEL_MIN);
    expect(max).toBeGreaterThanOrEqual(PANEL_MIN);
  });

  it('floats below the threshold, limited only by the window', () => {
    expect(panelWidthFor(0.36, 900, true)).toBe(PANEL_MIN + 4);
    expect(panelWidthFor(0.9, 900, true)).toBe(Math.round(900 * 0.7));
    // A very small window: never wider than the window.
    expect(panelWidthFor(0.36, 300, true)).toBeLessThanOrEqual(300);
  });
});
