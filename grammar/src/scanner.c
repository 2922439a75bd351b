/*
 * External scanner for the PromptForge block grammar.
 *
 * Every token of the grammar comes from here. Line endings between blocks are
 * not tokens: the scanner skips them, with any blank lines, as the padding of
 * the next block's first token. Where the lexer is follows from the scanner's
 * state, the lookahead character and the set of valid tokens:
 *
 *   - at the very start of the file (FRONTMATTER_OPEN valid),
 *   - inside the frontmatter (FRONTMATTER_CONTENT or FRONTMATTER_CLOSE valid),
 *   - inside a fence (`fence_char` set, FENCE_CLOSE valid): on the rest of its
 *     opening line (CODE_CONTENT valid), or at the closing line,
 *   - in the middle of a heading line (after its marker or content) or of a
 *     fence opener line, where the lookahead is not a line ending,
 *   - at the end of a line (the lookahead is a line ending): the next block,
 *     after the line ending and any blank lines, starts the next token.
 *
 * Only at the end of the file is a line ending part of a token: the hidden
 * `_line_ending`, which is empty and has the final line ending (and any
 * trailing blank lines) as its padding, so that the `document` (or a fence
 * whose opener is the last line) spans the whole file.
 *
 * During error recovery every token is valid (ERROR_SENTINEL included); the
 * scanner then finds nothing and leaves recovery to tree-sitter.
 *
 * State (serialized after every token, so that incremental reparsing can
 * resume anywhere):
 *
 *   - fence_char / fence_length: the marker of the fence the lexer is in
 *     (set by FENCE_MARKER, cleared by FENCE_CLOSE and by every block start);
 *     a closing line must use the same character, at least as many times.
 *   - pending_length: the length, in lexer advances (code points), of the
 *     heading content or info string that follows the marker just emitted.
 *     The marker's scan reads the whole line to find where the content ends
 *     (trailing spaces and a closing `#` sequence are not content), because
 *     the lexer cannot go back; the next call skips the spaces before the
 *     content and advances exactly that many times.
 *
 * Every other decision is made by looking ahead only; tree-sitter records how
 * far each token looked, so an edit anywhere in that range (or in the token's
 * padding) re-scans it.
 *
 * Robustness: every loop advances the lexer or stops at the end of the input
 * (`eof`, never a NUL lookahead alone, which may be a real character), no
 * buffer depends on the input, and counters saturate instead of overflowing.
 *
 * Speed: the lexer's `eof` is a function call, so it is only asked when the
 * lookahead is NUL (tree-sitter sets the lookahead to 0 at the end of the
 * input). Each byte is read about once: only a heading's content and a fence
 * opener's info string are read twice (by the marker, to measure them).
 */

#include "tree_sitter/alloc.h"
#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Must match the order of `externals` in grammar.js. */
enum TokenType {
  FRONTMATTER_OPEN,
  FRONTMATTER_CONTENT,
  FRONTMATTER_CLOSE,
  HEADING_INDENT,
  ATX_MARKER,
  HEADING_CONTENT,
  FENCE_INDENT,
  FENCE_MARKER,
  INFO_STRING,
  CODE_CONTENT,
  FENCE_CLOSE,
  THEMATIC_BREAK,
  PARAGRAPH,
  LINE_REST,
  LINE_ENDING,
  HEADING_INDENT_1, /* HEADING_INDENT_1 + k - 1: the indentation of a heading of rank k */
  HEADING_INDENT_2,
  HEADING_INDENT_3,
  ATX_MARKER_1, /* ATX_MARKER_1 + k - 1: the `#` run of a heading of rank k */
  ATX_MARKER_2,
  ATX_MARKER_3,
  ERROR_SENTINEL,
};

/* Heading ranks above 0. Must match RANKS in grammar.js. */
#define RANKS 3

/* Size of the serialized state: 1 + 4 + 4 bytes. */
#define SERIALIZED_SIZE 9

typedef struct {
  /* '`' or '~' while inside a fence, 0 otherwise. */
  uint8_t fence_char;
  /* Number of fence characters of the opener (>= 3), 0 outside a fence. */
  uint32_t fence_length;
  /* Advances of heading content / info string still to emit, see above. */
  uint32_t pending_length;
} Scanner;

/* ------------------------------------------------------------------------ */
/* Character helpers                                                        */
/* ------------------------------------------------------------------------ */

/* At the end of the input the lookahead is 0; a 0 elsewhere is a NUL byte. */
static inline bool at_eof(TSLexer *lexer) {
  return lexer->lookahead == 0 && lexer->eof(lexer);
}

/* A space or a tab (the only characters CommonMark trims in block syntax). */
static inline bool is_space(int32_t c) { return c == ' ' || c == '\t'; }

/* True for '\n' and '\r', the characters that start a line ending. */
static inline bool is_newline(int32_t c) { return c == '\n' || c == '\r'; }

/* True at '\n' or '\r' (a line ending starts here). */
static inline bool at_line_ending(TSLexer *lexer) { return is_newline(lexer->lookahead); }

/* True where the current line ends: a line ending or the end of input. */
static inline bool at_line_end(TSLexer *lexer) {
  int32_t c = lexer->lookahead;
  return c == '\n' || c == '\r' || (c == 0 && lexer->eof(lexer));
}

static inline bool at_space(TSLexer *lexer) { return is_space(lexer->lookahead); }

/* `c` must not be 0. */
static inline bool at_char(TSLexer *lexer, int32_t c) { return lexer->lookahead == c; }

static inline void advance(TSLexer *lexer) { lexer->advance(lexer, false); }

static inline uint32_t saturating_increment(uint32_t n) {
  return n == UINT32_MAX ? n : n + 1;
}

/*
 * Consumes one line ending: "\r\n", "\n" or a lone "\r". With `skip`, the
 * consumed characters become padding (they belong to no token).
 */
static inline void consume_line_ending(TSLexer *lexer, bool skip) {
  if (lexer->lookahead == '\r') {
    lexer->advance(lexer, skip);
    if (lexer->lookahead == '\n') lexer->advance(lexer, skip);
  } else if (lexer->lookahead == '\n') {
    lexer->advance(lexer, skip);
  }
}

/* Advances to the end of the current line, without consuming its ending. */
static inline void advance_to_line_end(TSLexer *lexer) {
  for (;;) {
    int32_t c = lexer->lookahead;
    if (c == '\n' || c == '\r') return;
    if (c == 0 && lexer->eof(lexer)) return;
    lexer->advance(lexer, false);
  }
}

/* ------------------------------------------------------------------------ */
/* Line classification                                                      */
/* ------------------------------------------------------------------------ */

typedef enum {
  LINE_EOF,      /* only spaces/tabs, then the end of the input */
  LINE_BLANK,    /* only spaces/tabs, then a line ending */
  LINE_HEADING,  /* an ATX heading */
  LINE_FENCE,    /* a valid fence opener */
  LINE_BREAK,    /* a thematic break */
  LINE_PROSE,    /* anything else */
} LineKind;

typedef struct {
  LineKind kind;
  /* Leading spaces (block lines have 0-3). */
  uint32_t indent;
  /* LINE_HEADING: the number of `#`. */
  uint32_t level;
  /* LINE_FENCE: the marker character and run length. */
  uint8_t fence_char;
  uint32_t fence_length;
  /* LINE_FENCE: advances of the trimmed info string. */
  uint32_t info_length;
  /* LINE_BREAK: the line is exactly "---" (a frontmatter delimiter). */
  bool is_delimiter;
} Line;

/*
 * Reads the rest of a fence opener line, after its marker run: the info
 * string. Sets `*info_length` to its length in advances, trimmed of spaces and
 * tabs on both sides. Returns false when the line is not an opener (a backtick
 * fence whose info string contains a backtick). Stops at the end of the line.
 */
static bool scan_fence_info(TSLexer *lexer, uint8_t fence_char, uint32_t *info_length) {
  while (at_space(lexer)) advance(lexer);
  uint32_t position = 0;
  uint32_t end = 0;
  while (!at_line_end(lexer)) {
    int32_t c = lexer->lookahead;
    if (fence_char == '`' && c == '`') return false;
    advance(lexer);
    position = saturating_increment(position);
    if (!is_space(c)) end = position;
  }
  *info_length = end;
  return true;
}

/* FNV-1a over code points. */
#define HASH_SEED 2166136261u
static inline uint32_t hash_step(uint32_t hash, int32_t c) {
  return (hash ^ (uint32_t)c) * 16777619u;
}

/*
 * The rank of a heading, from the hash of its line: >= k with probability
 * 1/8^k (k <= RANKS). See grammar.js: a heading of rank k >= 1 opens a
 * group of level k. Only the line's text counts, so the rank is the same
 * however the parser reaches the line.
 */
static unsigned heading_rank(uint32_t hash) {
  /* MurmurHash3's finalizer, so that the low bits depend on every byte. */
  hash ^= hash >> 16;
  hash *= 0x85ebca6bu;
  hash ^= hash >> 13;
  hash *= 0xc2b2ae35u;
  hash ^= hash >> 16;
  unsigned rank = 0;
  while (rank < RANKS && (hash & 7u) == 0) {
    rank++;
    hash >>= 3;
  }
  return rank;
}

/*
 * Reads the rest of a heading line, after its `#` run of `level` characters,
 * and returns the length in advances of the heading content: leading and
 * trailing spaces/tabs are not content, and neither is a closing sequence (a
 * last word made only of `#`, which is preceded by a space/tab or is the whole
 * content). Stops at the end of the line. Sets `*rank` to the heading's rank
 * (from the `#` run and the rest of the line).
 */
static uint32_t scan_heading_content_length(TSLexer *lexer, uint32_t level, unsigned *rank) {
  uint32_t hash = HASH_SEED;
  for (uint32_t i = 0; i < level; i++) hash = hash_step(hash, '#');
  while (at_space(lexer)) {
    hash = hash_step(hash, lexer->lookahead);
    advance(lexer);
  }
  uint32_t position = 0;
  uint32_t last_word_end = 0;
  uint32_t previous_word_end = 0;
  bool last_word_is_hashes = false;
  bool any_word = false;
  while (!at_line_end(lexer)) {
    if (is_space(lexer->lookahead)) {
      hash = hash_step(hash, lexer->lookahead);
      advance(lexer);
      position = saturating_increment(position);
      continue;
    }
    bool only_hashes = true;
    while (!is_space(lexer->lookahead) && !at_line_end(lexer)) {
      int32_t c = lexer->lookahead;
      if (c != '#') only_hashes = false;
      hash = hash_step(hash, c);
      advance(lexer);
      position = saturating_increment(position);
    }
    previous_word_end = any_word ? last_word_end : 0;
    last_word_end = position;
    last_word_is_hashes = only_hashes;
    any_word = true;
  }
  *rank = heading_rank(hash);
  if (!any_word) return 0;
  return last_word_is_hashes ? previous_word_end : last_word_end;
}

/*
 * Classifies the line starting at the lexer's position (which must be the
 * first byte of a line) by reading as much of it as needed.
 *
 * With `mark`, the token end is marked where the first token of a block line
 * ends: after the indentation when there is one, else after the `#` or fence
 * run. (Thematic breaks and paragraphs are marked by the caller, later.)
 *
 * Where the lexer stops: LINE_BLANK at the line ending; LINE_EOF at the end;
 * LINE_HEADING right after the `#` run; LINE_FENCE and LINE_BREAK at the end
 * of the line; LINE_PROSE somewhere in the line.
 */
static Line classify_line(TSLexer *lexer, bool mark) {
  Line line = {LINE_PROSE, 0, 0, 0, 0, 0, false};
  bool has_tab = false;
  int32_t first;
  for (;;) {
    first = lexer->lookahead;
    if (first == ' ') {
      line.indent = saturating_increment(line.indent);
    } else if (first == '\t') {
      has_tab = true;
    } else {
      break;
    }
    advance(lexer);
  }
  if (is_newline(first)) {
    line.kind = LINE_BLANK;
    return line;
  }
  if (first == 0 && lexer->eof(lexer)) {
    line.kind = LINE_EOF;
    return line;
  }
  /* A tab anywhere in the indentation reaches column 4: prose. */
  if (has_tab || line.indent > 3) return line;
  if (mark && line.indent > 0) lexer->mark_end(lexer);

  if (first == '#') {
    uint32_t level = 0;
    while (at_char(lexer, '#') && level < 7) {
      advance(lexer);
      level++;
    }
    if (mark && line.indent == 0) lexer->mark_end(lexer);
    if (level <= 6 && (is_space(lexer->lookahead) || at_line_end(lexer))) {
      line.kind = LINE_HEADING;
      line.level = level;
    }
    return line;
  }

  if (first == '`' || first == '~') {
    uint32_t length = 0;
    while (at_char(lexer, first)) {
      advance(lexer);
      length = saturating_increment(length);
    }
    if (mark && line.indent == 0) lexer->mark_end(lexer);
    if (length < 3) return line;
    uint32_t info_length = 0;
    if (!scan_fence_info(lexer, (uint8_t)first, &info_length)) return line;
    line.kind = LINE_FENCE;
    line.fence_char = (uint8_t)first;
    line.fence_length = length;
    line.info_length = info_length;
    return line;
  }

  if (first == '-' || first == '*' || first == '_') {
    uint32_t count = 0;
    bool has_space = false;
    while (!at_line_end(lexer)) {
      int32_t c = lexer->lookahead;
      if (c == first) {
        count = saturating_increment(count);
      } else if (is_space(c)) {
        has_space = true;
      } else {
        return line; /* another character: prose */
      }
      advance(lexer);
    }
    if (count >= 3) {
      line.kind = LINE_BREAK;
      line.is_delimiter = first == '-' && count == 3 && !has_space && line.indent == 0;
    }
    return line;
  }

  return line;
}

/*
 * At the first byte of a line: true when the line is exactly "---" (then the
 * lexer is right after it, at the line's end). Reads at most 3 characters.
 */
static bool scan_delimiter_line(TSLexer *lexer) {
  for (int i = 0; i < 3; i++) {
    if (!at_char(lexer, '-')) return false;
    advance(lexer);
  }
  return at_line_end(lexer);
}

/*
 * At the first byte of a line inside a fence: true when the line closes it
 * (0-3 spaces, at least `fence_length` of `fence_char`, then only spaces and
 * tabs). On true the lexer is at the end of the line.
 */
static bool scan_fence_closer(const Scanner *s, TSLexer *lexer) {
  uint32_t indent = 0;
  while (at_char(lexer, ' ')) {
    if (indent == 3) return false;
    advance(lexer);
    indent++;
  }
  uint32_t length = 0;
  while (at_char(lexer, s->fence_char)) {
    advance(lexer);
    length = saturating_increment(length);
  }
  if (length < s->fence_length) return false;
  while (at_space(lexer)) advance(lexer);
  return at_line_end(lexer);
}

/*
 * After the line ending of an opening `---`: true when a later line is exactly
 * `---`. Reads up to that line (or the end of the input).
 */
static bool find_closing_delimiter(TSLexer *lexer) {
  for (;;) {
    if (at_eof(lexer)) return false;
    if (scan_delimiter_line(lexer)) return true;
    advance_to_line_end(lexer);
    if (!at_line_ending(lexer)) return false;
    consume_line_ending(lexer, false);
  }
}

static inline void clear_state(Scanner *s) {
  s->fence_char = 0;
  s->fence_length = 0;
  s->pending_length = 0;
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * At the end of the input, after skipped line endings (the lexer's token
 * start is there): the empty `_line_ending` whose padding they are.
 */
static bool finish_with_line_ending(TSLexer *lexer, const bool *valid_symbols) {
  if (!valid_symbols[LINE_ENDING]) return false;
  lexer->mark_end(lexer);
  lexer->result_symbol = LINE_ENDING;
  return true;
}

/* Inside the frontmatter, at the first byte of a line. */
static bool scan_frontmatter_body(TSLexer *lexer, const bool *valid_symbols) {
  if (at_eof(lexer)) return false;
  if (scan_delimiter_line(lexer)) {
    if (!valid_symbols[FRONTMATTER_CLOSE]) return false;
    lexer->mark_end(lexer);
    lexer->result_symbol = FRONTMATTER_CLOSE;
    return true;
  }
  if (!valid_symbols[FRONTMATTER_CONTENT]) return false;
  /* The content runs up to the first byte of the closing line. */
  for (;;) {
    advance_to_line_end(lexer);
    if (!at_line_ending(lexer)) {
      /* Unclosed (cannot happen after a FRONTMATTER_OPEN): take it all. */
      lexer->mark_end(lexer);
      break;
    }
    consume_line_ending(lexer, false);
    lexer->mark_end(lexer);
    if (at_eof(lexer) || scan_delimiter_line(lexer)) break;
  }
  lexer->result_symbol = FRONTMATTER_CONTENT;
  return true;
}

/* Inside a fence, at the first byte of a line after the opener. */
static bool scan_fence_body(Scanner *s, TSLexer *lexer, const bool *valid_symbols) {
  if (s->fence_char == 0 || at_eof(lexer)) return false;
  if (scan_fence_closer(s, lexer)) {
    if (!valid_symbols[FENCE_CLOSE]) return false;
    lexer->mark_end(lexer);
    clear_state(s);
    lexer->result_symbol = FENCE_CLOSE;
    return true;
  }
  if (!valid_symbols[CODE_CONTENT]) return false;
  /* The content runs up to the first byte of the closing line, or to the end
   * of the input when the fence is not closed. */
  for (;;) {
    advance_to_line_end(lexer);
    if (!at_line_ending(lexer)) {
      lexer->mark_end(lexer);
      break;
    }
    consume_line_ending(lexer, false);
    lexer->mark_end(lexer);
    if (at_eof(lexer) || scan_fence_closer(s, lexer)) break;
  }
  s->pending_length = 0;
  lexer->result_symbol = CODE_CONTENT;
  return true;
}

/*
 * A paragraph: the lexer is somewhere in its first line. Takes following lines
 * until a blank line, the end of the input or a line that starts another
 * block (heading, fence opener, thematic break).
 */
static void scan_paragraph(TSLexer *lexer) {
  for (;;) {
    advance_to_line_end(lexer);
    lexer->mark_end(lexer);
    if (!at_line_ending(lexer)) return;
    consume_line_ending(lexer, false);
    Line next = classify_line(lexer, false);
    if (next.kind != LINE_PROSE) return;
  }
}

/*
 * At the first byte of a line where a block may start. `first_line` is true
 * only at the start of the file, where the frontmatter may open. A BOM at byte
 * 0 has already been skipped by tree-sitter's lexer, so it is padding before
 * the first token; a BOM anywhere else is an ordinary (prose) character.
 *
 * Blank lines are skipped as padding. When only blank lines are left, the
 * empty `_line_ending` is returned if it may end the document here (never at
 * the start of the file: an empty or blank file has no token).
 */
static bool scan_block_start(Scanner *s, TSLexer *lexer, const bool *valid_symbols,
                             bool first_line) {
  clear_state(s);
  bool file_start = first_line;

  Line line;
  for (;;) {
    line = classify_line(lexer, true);
    if (line.kind == LINE_EOF) {
      if (file_start) return false;
      return finish_with_line_ending(lexer, valid_symbols);
    }
    if (line.kind != LINE_BLANK) break;
    consume_line_ending(lexer, true);
    first_line = false;
  }

  switch (line.kind) {
    case LINE_HEADING: {
      /* The first token (indentation or `#` run) tells the heading's rank,
       * which needs the whole line. */
      unsigned rank = 0;
      uint32_t content_length = scan_heading_content_length(lexer, line.level, &rank);
      enum TokenType symbol;
      if (line.indent > 0) {
        symbol = rank == 0 ? HEADING_INDENT : (enum TokenType)(HEADING_INDENT_1 + rank - 1);
      } else {
        symbol = rank == 0 ? ATX_MARKER : (enum TokenType)(ATX_MARKER_1 + rank - 1);
        s->pending_length = content_length;
      }
      if (!valid_symbols[symbol]) return false;
      lexer->result_symbol = symbol;
      return true;
    }

    case LINE_FENCE:
      if (line.indent > 0) {
        if (!valid_symbols[FENCE_INDENT]) return false;
        lexer->result_symbol = FENCE_INDENT;
        return true;
      }
      if (!valid_symbols[FENCE_MARKER]) return false;
      s->fence_char = line.fence_char;
      s->fence_length = line.fence_length;
      s->pending_length = line.info_length;
      lexer->result_symbol = FENCE_MARKER;
      return true;

    case LINE_BREAK:
      lexer->mark_end(lexer);
      if (first_line && line.is_delimiter && at_line_ending(lexer)) {
        consume_line_ending(lexer, false);
        if (find_closing_delimiter(lexer)) {
          if (!valid_symbols[FRONTMATTER_OPEN]) return false;
          lexer->result_symbol = FRONTMATTER_OPEN;
          return true;
        }
      }
      if (!valid_symbols[THEMATIC_BREAK]) return false;
      lexer->result_symbol = THEMATIC_BREAK;
      return true;

    default:
      if (!valid_symbols[PARAGRAPH]) return false;
      scan_paragraph(lexer);
      lexer->result_symbol = PARAGRAPH;
      return true;
  }
}

/* After a heading's indentation: the `#` run. */
static bool scan_atx_marker(Scanner *s, TSLexer *lexer) {
  uint32_t level = 0;
  while (at_char(lexer, '#') && level < 7) {
    advance(lexer);
    level++;
  }
  if (level == 0 || level > 6) return false;
  if (!is_space(lexer->lookahead) && !at_line_end(lexer)) return false;
  lexer->mark_end(lexer);
  unsigned rank = 0;
  s->pending_length = scan_heading_content_length(lexer, level, &rank);
  lexer->result_symbol = ATX_MARKER;
  return true;
}

/* After a fence's indentation: the backtick or tilde run. */
static bool scan_fence_marker(Scanner *s, TSLexer *lexer) {
  if (!at_char(lexer, '`') && !at_char(lexer, '~')) return false;
  uint8_t fence_char = (uint8_t)lexer->lookahead;
  uint32_t length = 0;
  while (at_char(lexer, fence_char)) {
    advance(lexer);
    length = saturating_increment(length);
  }
  if (length < 3) return false;
  lexer->mark_end(lexer);
  uint32_t info_length = 0;
  if (!scan_fence_info(lexer, fence_char, &info_length)) return false;
  s->fence_char = fence_char;
  s->fence_length = length;
  s->pending_length = info_length;
  lexer->result_symbol = FENCE_MARKER;
  return true;
}

/*
 * After a marker: the heading content or info string whose length the marker
 * recorded. The spaces before it are skipped (padding inside the line node).
 */
static bool scan_pending_content(Scanner *s, TSLexer *lexer, enum TokenType symbol) {
  while (at_space(lexer)) lexer->advance(lexer, true);
  uint32_t remaining = s->pending_length;
  uint32_t advanced = 0;
  while (remaining > 0 && !at_line_end(lexer)) {
    advance(lexer);
    remaining--;
    advanced++;
  }
  s->pending_length = 0;
  if (advanced == 0) return false;
  lexer->mark_end(lexer);
  lexer->result_symbol = symbol;
  return true;
}

/* In the middle of a heading or fence opener line: the rest of the line. */
static bool scan_line_rest(TSLexer *lexer) {
  advance_to_line_end(lexer);
  lexer->mark_end(lexer);
  lexer->result_symbol = LINE_REST;
  return true;
}

/*
 * Inside a fence, after its marker. On the opener line (CODE_CONTENT valid):
 * the info string, the rest of the line, then at its end the first body line
 * (content or closing line) with the line ending as padding, or the empty
 * `_line_ending` when the file ends with that line ending. After the content
 * (CODE_CONTENT not valid): the closing line.
 */
static bool scan_in_fence(Scanner *s, TSLexer *lexer, const bool *valid_symbols) {
  if (valid_symbols[CODE_CONTENT]) {
    if (!at_line_end(lexer)) {
      if (s->pending_length > 0 && valid_symbols[INFO_STRING]) {
        return scan_pending_content(s, lexer, INFO_STRING);
      }
      s->pending_length = 0;
      if (!valid_symbols[LINE_REST]) return false;
      return scan_line_rest(lexer);
    }
    s->pending_length = 0;
    if (!at_line_ending(lexer)) return false;
    consume_line_ending(lexer, true);
    if (at_eof(lexer)) return finish_with_line_ending(lexer, valid_symbols);
  }
  return scan_fence_body(s, lexer, valid_symbols);
}

/* ------------------------------------------------------------------------ */
/* tree-sitter entry points                                                 */
/* ------------------------------------------------------------------------ */

void *tree_sitter_promptforge_external_scanner_create(void) {
  Scanner *s = (Scanner *)ts_calloc(1, sizeof(Scanner));
  return s;
}

void tree_sitter_promptforge_external_scanner_destroy(void *payload) {
  ts_free(payload);
}

unsigned tree_sitter_promptforge_external_scanner_serialize(void *payload, char *buffer) {
  const Scanner *s = (const Scanner *)payload;
  if (s == NULL) return 0;
  /* An all-zero state serializes to nothing, like a fresh scanner. */
  if (s->fence_char == 0 && s->fence_length == 0 && s->pending_length == 0) return 0;
  buffer[0] = (char)s->fence_char;
  memcpy(buffer + 1, &s->fence_length, sizeof(uint32_t));
  memcpy(buffer + 5, &s->pending_length, sizeof(uint32_t));
  return SERIALIZED_SIZE;
}

void tree_sitter_promptforge_external_scanner_deserialize(void *payload, const char *buffer,
                                                          unsigned length) {
  Scanner *s = (Scanner *)payload;
  if (s == NULL) return;
  clear_state(s);
  if (buffer == NULL || length != SERIALIZED_SIZE) return;
  uint8_t fence_char = (uint8_t)buffer[0];
  s->fence_char = (fence_char == '`' || fence_char == '~') ? fence_char : 0;
  memcpy(&s->fence_length, buffer + 1, sizeof(uint32_t));
  memcpy(&s->pending_length, buffer + 5, sizeof(uint32_t));
  if (s->fence_char == 0) s->fence_length = 0;
}

bool tree_sitter_promptforge_external_scanner_scan(void *payload, TSLexer *lexer,
                                                   const bool *valid_symbols) {
  Scanner *s = (Scanner *)payload;
  if (s == NULL) return false;

  /* Error recovery: every symbol is valid, the position is unknown. */
  if (valid_symbols[ERROR_SENTINEL]) return false;

  /* The start of the file. */
  if (valid_symbols[FRONTMATTER_OPEN]) return scan_block_start(s, lexer, valid_symbols, true);

  /* After the opening delimiter (at its line ending) or the content. */
  if (valid_symbols[FRONTMATTER_CONTENT] || valid_symbols[FRONTMATTER_CLOSE]) {
    clear_state(s);
    if (at_line_ending(lexer)) consume_line_ending(lexer, true);
    return scan_frontmatter_body(lexer, valid_symbols);
  }

  if (valid_symbols[FENCE_CLOSE] && s->fence_char != 0) {
    return scan_in_fence(s, lexer, valid_symbols);
  }

  if (!at_line_end(lexer)) {
    if (valid_symbols[LINE_REST]) {
      /* In the middle of a heading line: its content, then the rest of it. */
      if (s->pending_length > 0 && valid_symbols[HEADING_CONTENT]) {
        return scan_pending_content(s, lexer, HEADING_CONTENT);
      }
      s->pending_length = 0;
      return scan_line_rest(lexer);
    }
    /* After a heading's or fence's indentation (only the marker is valid). */
    clear_state(s);
    if (valid_symbols[ATX_MARKER]) return scan_atx_marker(s, lexer);
    if (valid_symbols[FENCE_MARKER]) return scan_fence_marker(s, lexer);
    return false;
  }

  /* At the end of a line: the next block, after the line ending and any blank
   * lines (padding). */
  s->pending_length = 0;
  if (!at_line_ending(lexer)) return false;
  consume_line_ending(lexer, true);
  return scan_block_start(s, lexer, valid_symbols, false);
}
