/**
 * The graph's languages, in `Language::ALL` order (orbit-types): the
 * `/map` snapshot sends a language as its index here. Each has the colour
 * its files are drawn with and the legend shows.
 */
export const LANGUAGES = [
  'typescript',
  'javascript',
  'python',
  'rust',
  'go',
  'java',
  'kotlin',
  'c',
  'cpp',
  'markdown',
  'json',
  'toml',
  'yaml',
  'html',
  'css',
  'shell',
  'text',
] as const;

export type LanguageName = (typeof LANGUAGES)[number];

/** What the legend says. */
export const LANGUAGE_LABELS: Record<LanguageName, string> = {
  typescript: 'TypeScript',
  javascript: 'JavaScript',
  python: 'Python',
  rust: 'Rust',
  go: 'Go',
  java: 'Java',
  kotlin: 'Kotlin',
  c: 'C',
  cpp: 'C++',
  markdown: 'Markdown',
  json: 'JSON',
  toml: 'TOML',
  yaml: 'YAML',
  html: 'HTML',
  css: 'CSS',
  shell: 'Shell',
  text: 'Text',
};

/** sRGB colours, 0..255, distinguishable on the dark and the light background. */
export const LANGUAGE_COLOURS: readonly (readonly [number, number, number])[] = [
  [49, 120, 198], // typescript
  [240, 219, 79], // javascript
  [76, 175, 80], // python
  [222, 111, 62], // rust
  [0, 173, 216], // go
  [176, 114, 25], // java
  [169, 123, 255], // kotlin
  [150, 160, 170], // c
  [243, 75, 125], // cpp
  [120, 200, 255], // markdown
  [203, 203, 65], // json
  [156, 66, 33], // toml
  [203, 56, 55], // yaml
  [227, 76, 38], // html
  [86, 61, 124], // css
  [137, 224, 81], // shell
  [128, 128, 128], // text
];

export function languageIndex(name: string): number {
  const i = (LANGUAGES as readonly string[]).indexOf(name);
  return i < 0 ? LANGUAGES.length - 1 : i;
}

export function colourCss(index: number): string {
  const [r, g, b] = LANGUAGE_COLOURS[index] ?? [128, 128, 128];
  return `rgb(${r}, ${g}, ${b})`;
}
