// Which documents are prompts and test files. The server decides which
// Markdown files are prompts (`syntax::prompt_detection::is_prompt`); this is
// the editor's early decision, made before the server sees the document. It
// decides generously: it never calls a file the server takes for a prompt "not
// a prompt" (tests/detection is the shared corpus both are tested on), and may
// call a few others prompts (the server then shows why they are not).

/** A block-style `promptforge` key (quoted or not) and its indentation. */
const BLOCK_KEY = /^([ \t]*)["']?promptforge["']?[ \t]*:/;
/** A line opening flow style (`{`), an explicit key (`?`), or a tag or anchor (`!`, `&`). */
const OTHER_STYLE = /^[ \t]*[{?!&]/;
/** `promptforge` as a word (not inside a longer name). */
const WORD = /(?:^|[^A-Za-z0-9_-])promptforge(?:$|[^A-Za-z0-9_-])/;

/**
 * True when `text` may be a prompt: after an optional BOM and blank lines its
 * first line is `---`, and its frontmatter (the lines up to the next `---`
 * line, or to the end of the text: a `...` line does not end it) has a
 * `promptforge:` key, quoted or not, at the start of a line or indented as
 * the frontmatter's first line; or, when a line of it uses flow style, an
 * explicit key, a tag or an anchor, the word `promptforge` outside a comment.
 * The whole frontmatter is read, as the server reads it.
 */
export function isPromptText(text: string): boolean {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  let first = 0;
  while (first < lines.length && /^[ \t]*$/.test(lines[first] ?? '')) first++;
  if (lines[first] !== '---') return false;
  let topIndent: string | undefined;
  let otherStyle = false;
  let word = false;
  for (const line of lines.slice(first + 1)) {
    if (line === '---') break;
    if (/^[ \t]*(#|$)/.test(line)) continue;
    topIndent ??= /^[ \t]*/.exec(line)?.[0];
    const indent = BLOCK_KEY.exec(line)?.[1];
    if (indent === '' || indent === topIndent) return true;
    otherStyle ||= OTHER_STYLE.test(line);
    word ||= WORD.test(line);
  }
  return otherStyle && word;
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
