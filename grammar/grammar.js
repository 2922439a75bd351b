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
 * The rules below only arrange the scanner's tokens. Line endings are explicit
 * hidden tokens (`_line_ending`) between blocks, so that the set of valid
 * tokens tells the scanner exactly where it is: at the start of a block, in
 * the middle of a heading or fence opener line, inside the frontmatter or
 * inside a fence. Blank lines are skipped by the scanner (they belong to no
 * visible node).
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

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
    $._error_sentinel,
  ],

  // The scanner handles all whitespace itself: blank lines are skipped before
  // a block (padding), and blank lines at the end of the file are part of the
  // last line ending.
  extras: _ => [],

  rules: {
    // A file is a sequence of line blocks separated by line endings; the
    // frontmatter can only be the first one, and the last line may lack a
    // line ending.
    document: $ => optional(seq(
      choice($.frontmatter, $._block),
      repeat(seq($._line_ending, $._block)),
      optional($._line_ending),
    )),

    // `---`, YAML lines, `---`. Only at the start of the file (after an
    // optional BOM) and only when the closing line exists.
    frontmatter: $ => seq(
      alias($._frontmatter_open, $.frontmatter_delimiter),
      $._line_ending,
      optional($.frontmatter_content),
      alias($._frontmatter_close, $.frontmatter_delimiter),
    ),

    _block: $ => choice(
      $.atx_heading,
      $.fenced_code_block,
      $.thematic_break,
      $.paragraph,
    ),

    // `## Title ##`: the indentation (0-3 spaces) and the closing sequence are
    // hidden tokens inside the node.
    atx_heading: $ => seq(
      optional($._heading_indent),
      field('marker', $.atx_marker),
      optional(field('content', $.heading_content)),
      optional($._line_rest),
    ),

    // A fence runs to its closing line, or to the end of the file. `prec.right`
    // makes the line ending after the opener part of the fence.
    fenced_code_block: $ => prec.right(seq(
      $.fence_open,
      optional(seq(
        $._line_ending,
        optional($.code_content),
        optional($.fence_close),
      )),
    )),

    // The opening line of a fence, without its line ending.
    fence_open: $ => seq(
      optional($._fence_indent),
      field('marker', $.fence_marker),
      optional(field('info', $.info_string)),
      optional($._line_rest),
    ),
  },
});
