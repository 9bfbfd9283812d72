// @vitest-environment node
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

describe('icon sprite', () => {
  it('the UI bundles the same sprite as icons/sprite.svg', () => {
    expect(read('ui/src/assets/sprite.svg')).toBe(read('icons/sprite.svg'));
  });

  it('has every icon the UI uses, as 24x24 symbols', () => {
    const sprite = read('icons/sprite.svg');
    const names = [
      'arrow-left-right', 'copy', 'check', 'x', 'plus', 'search', 'settings', 'trash', 'archive', 'pencil',
      'panel-right', 'send', 'stop', 'chevron-down', 'chevron-right', 'alert', 'spinner', 'review', 'refresh', 'info',
      'undo', 'fork', 'paperclip', 'file', 'link', 'provider-anthropic', 'provider-openai', 'provider-google',
      'provider-other',
    ];
    for (const name of names) expect(sprite).toMatch(new RegExp(`<symbol id="i-${name}" viewBox="0 0 24 24"`));
    // No inline styles: the sprite is inlined into the page, which may run under a strict CSP.
    expect(sprite).not.toMatch(/style=/);
  });

  it('app icons exist as RGBA PNGs', () => {
    for (const [file, size] of [['32x32.png', 32], ['128x128.png', 128], ['128x128@2x.png', 256], ['icon.png', 512]] as const) {
      const png = readFileSync(new URL(`icons/${file}`, root));
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(png.readUInt32BE(16)).toBe(size);
      expect(png.readUInt32BE(20)).toBe(size);
      expect(png[24]).toBe(8); // bit depth
      expect(png[25]).toBe(6); // colour type RGBA
    }
  });
});
