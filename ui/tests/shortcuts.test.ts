import { describe, expect, it } from 'vitest';
import { isShortcut, shortcutLabel } from '../src/lib/shortcuts';

/** A keydown as the browser reports it. */
function key(init: KeyboardEventInit): KeyboardEvent {
  return new KeyboardEvent('keydown', init);
}

describe('shortcuts browsers keep for themselves', () => {
  it('Ctrl or Cmd with the letter is the shortcut (the desktop window sees them)', () => {
    expect(isShortcut(key({ key: 'n', code: 'KeyN', ctrlKey: true }), 'newSession')).toBe(true);
    expect(isShortcut(key({ key: 'w', code: 'KeyW', metaKey: true }), 'closeTab')).toBe(true);
    expect(isShortcut(key({ key: 'N', code: 'KeyN', ctrlKey: true, shiftKey: true }), 'newSession')).toBe(false);
  });

  it('Alt with the letter is the shortcut in a browser', () => {
    expect(isShortcut(key({ key: 'n', code: 'KeyN', altKey: true }), 'newSession')).toBe(true);
    expect(isShortcut(key({ key: 'w', code: 'KeyW', altKey: true }), 'closeTab')).toBe(true);
  });

  it("macOS's Option key types another character; the key's position still matches", () => {
    // Option+N is a dead key (˜) and Option+W types ∑ on a US layout.
    expect(isShortcut(key({ key: 'Dead', code: 'KeyN', altKey: true }), 'newSession')).toBe(true);
    expect(isShortcut(key({ key: '∑', code: 'KeyW', altKey: true }), 'closeTab')).toBe(true);
    expect(isShortcut(key({ key: '∑', code: 'KeyW', altKey: true }), 'newSession')).toBe(false);
  });

  it('a layout that puts the letter elsewhere matches by the letter it types', () => {
    // AZERTY: the key typing "w" sits where QWERTY has Z.
    expect(isShortcut(key({ key: 'w', code: 'KeyZ', altKey: true }), 'closeTab')).toBe(true);
  });

  it('Ctrl+Alt together is not the shortcut (AltGr on Windows layouts)', () => {
    expect(isShortcut(key({ key: 'n', code: 'KeyN', altKey: true, ctrlKey: true }), 'newSession')).toBe(false);
  });

  it('the label names the keys that work where the UI runs', () => {
    expect(shortcutLabel('newSession', false)).toBe('Alt+N');
    expect(shortcutLabel('closeTab', true)).toMatch(/\+W$/);
  });
});
