/**
 * @file PromptForge prompt files: the line-oriented BLOCK structure of a
 *       Markdown prompt (YAML frontmatter, ATX headings, fenced code blocks,
 *       thematic breaks and prose paragraphs).
 * @license MIT
 *
 * Every token is produced by the external scanner (src/scanner.c): the
 * structure is line based and context dependent (a fence runs until a
 * matching closer, the frontmatter exists only at the very start of the file
 * and only when it is closed), which a context-free lexer cannot express.
 *
 * The rules below only arrange the scanner's tokens. Line endings are not
 * tokens: the line ending after a block, and the blank lines after it, are the
 * padding of the next block's first token. The scanner knows where it is from
 * its state, its lookahead and the set of valid tokens (see scanner.c).
 *
 * Hidden structure, for speed (it is invisible: `document`'s named children
 * are still the blocks, in order). The blocks are grouped so that an
 * incremental reparse revisits few nodes: tree-sitter never reuses the inner
 * nodes of a `repeat` (they are "fragile"), only its elements, so a flat list
 * of thousands of blocks would be walked on every edit. Here:
 *
 *   - a `_section` is a heading and the blocks up to the next heading;
 *   - a heading of rank k >= 1 opens a `_group_k`, which holds the sections
 *     and lower groups up to the next heading of rank >= k.
 *
 * A heading's rank is a property of its line alone (a hash of the text from
 * the `#` run to the end of the line: about 1 heading in 8 has rank >= 1, 1 in
 * 64 rank >= 2, 1 in 512 rank 3), so the grouping is the same whichever way
 * the text was reached. The scanner announces it through the heading's first
 * token: `_heading_indent_k` or `_atx_marker_k` (shown as `atx_marker`); the
 * heading node is shown as `atx_heading` whatever its rank.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

/** Heading ranks above 0 (group levels). Must match RANKS in src/scanner.c. */
const RANKS = 3;

/**
 * An ATX heading whose first token announces `rank`: `## Title ##`, with the
 * indentation (0-3 spaces) and the closing sequence as hidden tokens inside
 * the node. `prec.right` keeps the closing sequence in the heading.
 *
 * @param {GrammarSymbols<string>} $
 * @param {number} rank
 */
function heading($, rank) {
  const start = rank === 0
    ? seq(optional($._heading_indent), field('marker', $.atx_marker))
    : choice(
      seq($[`_heading_indent_${rank}`], field('marker', $.atx_marker)),
      field('marker', alias($[`_atx_marker_${rank}`], $.atx_marker)),
    );
  return prec.right(seq(
    start,
    optional(field('content', $.heading_content)),
    optional($._line_rest),
  ));
}

/**
 * A group opened by a heading of `rank`: the blocks, sections and groups of
 * lower ranks after it, up to the next heading of rank >= `rank`.
 *
 * @param {GrammarSymbols<string>} $
 * @param {number} rank
 */
function group($, rank) {
  const parts = [$._item, $._section];
  for (let lower = 1; lower < rank; lower++) parts.push($[`_group_${lower}`]);
  return prec.right(seq(
    alias($[`_atx_heading_${rank}`], $.atx_heading),
    repeat(choice(...parts)),
  ));
}

/** @type {Record<string, ($: GrammarSymbols<string>) => RuleOrLiteral>} */
const rankedRules = {};
for (let rank = 1; rank <= RANKS; rank++) {
  rankedRules[`_atx_heading_${rank}`] = $ => heading($, rank);
  rankedRules[`_group_${rank}`] = $ => group($, rank);
}

/** @param {string} prefix */
const rankedTokens = prefix => $ =>
  Array.from({length: RANKS}, (_, i) => $[`${prefix}${i + 1}`]);

module.exports = grammar({
  name: 'promptforge',

  // The order of this list must match `enum TokenType` in src/scanner.c.
  externals: $ => [
    $._frontmatter_open,
    $.frontmatter_content,
    $._frontmatter_close,
    $._heading_indent,
    $.atx_marker,
    $.heading_content,
    $._fence_indent,
    $.fence_marker,
    $.info_string,
    $.code_content,
    $.fence_close,
    $.thematic_break,
    $.paragraph,
    $._line_rest,
    $._line_ending,
    ...rankedTokens('_heading_indent_')($),
    ...rankedTokens('_atx_marker_')($),
    $._error_sentinel,
  ],

  // The scanner handles all whitespace itself.
  extras: _ => [],

  rules: {
    // The frontmatter (only first), then the blocks before the first heading,
    // then sections and groups (see above). The line ending and blank lines
    // at the end of the file are the padding of an empty `_line_ending`, so
    // that the document spans the whole file.
    document: $ => seq(
      optional($.frontmatter),
      repeat($._part),
      optional($._line_ending),
    ),

    // Anything may follow anything at every level, so that the set of valid
    // tokens after a block is the same everywhere (tree-sitter reuses a token
    // in an incremental reparse only if it was scanned with the same set of
    // valid tokens). `prec.right` on the sections and groups resolves the
    // ambiguity: a block belongs to the innermost section or group that can
    // hold it, as described above.
    _part: $ => {
      const parts = [$._item, $._section];
      for (let rank = 1; rank <= RANKS; rank++) parts.push($[`_group_${rank}`]);
      return choice(...parts);
    },

    // `---`, YAML lines, `---`. Only at the start of the file (after an
    // optional BOM) and only when the closing line exists.
    frontmatter: $ => seq(
      alias($._frontmatter_open, $.frontmatter_delimiter),
      optional($.frontmatter_content),
      alias($._frontmatter_close, $.frontmatter_delimiter),
    ),

    // A block other than a heading. `_line_rest` never occurs here (the
    // scanner only returns it in the middle of a heading or fence opener
    // line); it is listed so that the set of valid tokens after every block is
    // the same as after a heading's content, which lets tree-sitter reuse the
    // token that follows a heading in an incremental reparse.
    _item: $ => choice(
      $.fenced_code_block,
      $.thematic_break,
      $.paragraph,
      $._line_rest,
    ),

    // A heading of rank 0 and the blocks up to the next heading. The first two
    // blocks are direct children (one reduction for the usual heading, prose
    // and code), the others a repetition.
    _section: $ => prec.right(seq(
      $.atx_heading,
      optional(seq($._item, optional(seq($._item, repeat($._item))))),
    )),

    atx_heading: $ => heading($, 0),

    ...rankedRules,

    // A fence runs to its closing line, or to the end of the file. When the
    // opener's line ending ends the file, the empty `_line_ending` after it
    // (`prec.right`) keeps that line ending in the fence.
    fenced_code_block: $ => prec.right(seq(
      $.fence_open,
      optional(choice(
        $._line_ending,
        seq($.code_content, optional($.fence_close)),
        $.fence_close,
      )),
    )),

    // The opening line of a fence, without its line ending.
    fence_open: $ => prec.right(seq(
      optional($._fence_indent),
      field('marker', $.fence_marker),
      optional(field('info', $.info_string)),
      optional($._line_rest),
    )),
  },
});
