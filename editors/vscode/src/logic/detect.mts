// Which documents are prompts and test files (editor.md: a Markdown file is a
// prompt when its frontmatter has a top-level `promptforge:` key).

/** How many frontmatter lines the check reads at most. */
const MAX_FRONTMATTER_LINES = 500;

/**
 * True when `text` starts with a `---` line and its frontmatter (up to the
 * closing `---` or `...` line, or the end of the text) has a top-level
 * `promptforge:` key.
 */
export function isPromptText(text: string): boolean {
  const lines = text.split(/\r?\n/, MAX_FRONTMATTER_LINES + 1);
  if (lines[0]?.replace(/^\uFEFF/, '').trimEnd() !== '---') return false;
  for (const line of lines.slice(1)) {
    const trimmed = line.trimEnd();
    if (trimmed === '---' || trimmed === '...') return false;
    if (/^promptforge\s*:/.test(line)) return true;
  }
  return false;
}

/** True for a prompt's file name by its name alone (`*.pf.md`). */
export function isPromptFileName(path: string): boolean {
  return /\.pf\.md$/i.test(path);
}

/** True for a prompt test file (`*.test.yaml`). */
export function isTestFileName(path: string): boolean {
  return /\.test\.yaml$/i.test(path);
}

/** The file name at the end of a path or URI. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return decodeURIComponent(parts[parts.length - 1] ?? path);
}
