// Theme options → CSS custom properties on the widget's wrapper. Colours are checked by the browser
// (CSS.supports); the text colour on the accent is picked for contrast, so any brand colour stays readable.

export interface Theme {
  /** Brand colour (any CSS colour): launcher, header, the customer's bubbles, buttons. */
  accent?: string;
  title?: string;
  subtitle?: string;
  /** The corner of the launcher and the panel. Default: the end of a line (right; left in a right-to-left widget). */
  position?: 'left' | 'right';
  /** `auto` follows the visitor's system setting (prefers-color-scheme). Default `light`. */
  colorScheme?: 'light' | 'dark' | 'auto';
}

export interface ResolvedTheme {
  accent?: string;
  title?: string;
  subtitle?: string;
  position: 'left' | 'right';
  colorScheme: 'light' | 'dark' | 'auto';
}

export function resolveTheme(t: Theme = {}, warn: (line: string) => void = () => {}, dir: 'ltr' | 'rtl' = 'ltr'): ResolvedTheme {
  const validColour = (c: string | undefined) => {
    if (!c) return undefined;
    if (typeof CSS !== 'undefined' && CSS.supports && !CSS.supports('color', c)) {
      warn(`[parley] theme.accent "${c}" is not a CSS colour; using the default`);
      return undefined;
    }
    return c;
  };
  return {
    accent: validColour(t.accent),
    title: t.title || undefined,
    subtitle: t.subtitle ?? undefined,
    position: t.position === 'left' || t.position === 'right' ? t.position : dir === 'rtl' ? 'left' : 'right',
    colorScheme: t.colorScheme === 'dark' || t.colorScheme === 'auto' ? t.colorScheme : 'light',
  };
}

/** Relative luminance (WCAG) of an `rgb(…)`/`rgba(…)` string as computed by the browser. */
function luminance(rgb: string): number | undefined {
  const m = /rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)/.exec(rgb);
  if (!m) return undefined;
  const [r, g, b] = [m[1], m[2], m[3]].map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** White or near-black, whichever contrasts more with the accent. */
export function textOn(computedAccent: string): string {
  const l = luminance(computedAccent);
  if (l === undefined) return '#fff';
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? '#fff' : '#111827';
}

export function applyTheme(host: HTMLElement, wrap: HTMLElement, theme: ResolvedTheme) {
  host.setAttribute('data-position', theme.position);
  wrap.setAttribute('data-scheme', theme.colorScheme);
  wrap.setAttribute('data-position', theme.position);
  if (!theme.accent) return;
  wrap.style.setProperty('--pw-accent', theme.accent);
  // The browser resolves any CSS colour (names, hex, hsl) to rgb(); read it back for the contrast check.
  const probe = document.createElement('span');
  probe.style.color = theme.accent;
  wrap.append(probe);
  const computed = getComputedStyle(probe).color;
  probe.remove();
  const on = textOn(computed);
  wrap.style.setProperty('--pw-on-accent', on);
  // Dark text reads better on it: a light accent, under 4.5:1 on the white panel; text and rings use the text colour.
  if (on !== '#fff') wrap.style.setProperty('--pw-accent-ink', 'var(--pw-fg)');
}
