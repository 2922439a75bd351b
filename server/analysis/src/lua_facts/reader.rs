//! One pass over a block's tokens that reads its [`LuaFacts`] without building
//! a tree: a recursive reading of Lua's statements and expressions that keeps
//! only what the facts need (operator precedence does not matter to them).
//!
//! It gives the facts tree-sitter-lua's tree gave (the differential test in
//! tests/tests/lua_facts_differential.rs holds it to that on every Lua block of
//! the repository): every identifier but field, method, label and table-key
//! names counts as a variable (declared names, parameters and attribute names
//! too); `global` is a keyword where an expression or a table key may stand.
//! On broken code it reads on: a token no statement starts with is skipped, a
//! missing closer is taken as there, and the code's end closes everything.

use std::ops::Range;

use super::lexer::{Lexer, StrInfo, Tok, Token};
use super::MESSAGE_METHODS;
use super::{Arg, CallsRead, Identifier, LuaFacts};

/// Deeper nesting than Lua compiles (its limit is 200 levels): past it the
/// reader goes on token by token instead of recursing.
const MAX_DEPTH: usize = 256;

/// What an expression is, as far as an argument's [`Arg`] needs.
pub(super) enum Shape {
    /// A lone string.
    Str(StrInfo),
    /// A lone table constructor (its [`Arg`] when wanted).
    Table(Option<Arg>),
    /// A lone number, boolean, nil or function.
    Literal(&'static str),
    /// The keyword `global` alone (tree-sitter-lua's tree has no node for it
    /// among a call's arguments).
    Global,
    /// Anything else.
    Other,
}

/// An expression read: its byte range in the code and its shape.
pub(super) struct Expr {
    pub(super) range: Range<usize>,
    pub(super) shape: Shape,
}

/// The expression a suffix applies to, as far as the facts need.
enum Prefix {
    /// A lone identifier.
    Name(Range<usize>),
    /// `name.field`.
    NameDot(Range<usize>, Range<usize>),
    /// Anything else.
    Other,
}

/// Reads the facts of `code`, whose byte 0 is at `base` in the file text.
pub(super) fn read(code: &str, base: usize) -> LuaFacts {
    let mut lexer = Lexer::new(code);
    let tok = lexer.next_token();
    let mut reader = Reader {
        code,
        base,
        lexer,
        tok,
        prev_end: 0,
        depth: 0,
        facts: LuaFacts::default(),
    };
    while reader.tok.tok != Tok::Eof {
        reader.block();
        if reader.tok.tok != Tok::Eof {
            reader.bump();
        }
    }
    reader.facts
}

pub(super) struct Reader<'a> {
    pub(super) code: &'a str,
    pub(super) base: usize,
    pub(super) lexer: Lexer<'a>,
    /// The current token.
    pub(super) tok: Token,
    /// Where the last token consumed ends.
    pub(super) prev_end: usize,
    pub(super) depth: usize,
    pub(super) facts: LuaFacts,
}

impl Reader<'_> {
    pub(super) fn bump(&mut self) {
        self.prev_end = self.tok.end;
        self.tok = self.lexer.next_token();
    }

    pub(super) fn eat(&mut self, tok: Tok) -> bool {
        let found = self.tok.tok == tok;
        if found {
            self.bump();
        }
        found
    }

    /// The token after the current one.
    pub(super) fn peek(&self) -> Tok {
        self.lexer.clone().next_token().tok
    }

    /// True when the token after the current one continues a suffixed
    /// expression (a field, an index, a call).
    pub(super) fn peek_suffix(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Dot | Tok::LBracket | Tok::Colon | Tok::LParen | Tok::LBrace | Tok::Str
        )
    }

    pub(super) fn text(&self, range: &Range<usize>) -> &str {
        self.code.get(range.clone()).unwrap_or("")
    }

    pub(super) fn file(&self, range: &Range<usize>) -> Range<usize> {
        self.base + range.start..self.base + range.end
    }

    pub(super) fn range(&self) -> Range<usize> {
        self.tok.start..self.tok.end
    }

    /// True at a name that is the keyword `global` here (where an expression
    /// or a table key may stand).
    pub(super) fn at_global(&self) -> bool {
        self.tok.tok == Tok::Name && self.text(&self.range()) == "global"
    }

    /// Consumes a name used as a variable.
    pub(super) fn variable(&mut self) {
        if self.tok.tok == Tok::Name {
            let range = self.range();
            self.facts.identifiers.push(Identifier {
                name: self.text(&range).to_owned(),
                range: self.file(&range),
            });
            self.bump();
        }
    }

    /// Consumes a name that is not a variable (a field, method or label name).
    pub(super) fn other_name(&mut self) -> Option<Range<usize>> {
        let range = self.range();
        (self.tok.tok == Tok::Name).then(|| {
            self.bump();
            range
        })
    }

    pub(super) fn block(&mut self) {
        self.depth += 1;
        while !matches!(
            self.tok.tok,
            Tok::Eof | Tok::End | Tok::Else | Tok::Elseif | Tok::Until
        ) {
            if self.depth > MAX_DEPTH {
                self.bump();
            } else {
                self.statement();
            }
        }
        self.depth -= 1;
    }

    pub(super) fn statement(&mut self) {
        match self.tok.tok {
            Tok::DoubleColon => {
                self.bump();
                self.other_name();
                self.eat(Tok::DoubleColon);
            }
            Tok::Goto => {
                self.bump();
                self.other_name();
            }
            Tok::Do => {
                self.bump();
                self.block();
                self.eat(Tok::End);
            }
            Tok::While => {
                self.bump();
                self.expr(false);
                self.eat(Tok::Do);
                self.block();
                self.eat(Tok::End);
            }
            Tok::Repeat => {
                self.bump();
                self.block();
                if self.eat(Tok::Until) {
                    self.expr(false);
                }
            }
            Tok::If => self.if_statement(),
            Tok::For => self.for_statement(),
            Tok::Function => {
                self.bump();
                self.function_name();
                self.function_body();
            }
            Tok::Local => {
                self.bump();
                self.declaration();
            }
            Tok::Return => {
                self.bump();
                if !matches!(
                    self.tok.tok,
                    Tok::Eof | Tok::End | Tok::Else | Tok::Elseif | Tok::Until | Tok::Semi
                ) {
                    self.expr_list();
                }
            }
            Tok::Name
                if self.at_global()
                    && matches!(self.peek(), Tok::Function | Tok::Name | Tok::Lt | Tok::Star) =>
            {
                self.bump();
                if !self.eat(Tok::Star) {
                    self.declaration();
                }
            }
            Tok::Name | Tok::LParen => {
                self.suffixed();
                if matches!(self.tok.tok, Tok::Assign | Tok::Comma) {
                    while self.eat(Tok::Comma) {
                        self.suffixed();
                    }
                    self.eat(Tok::Assign);
                    self.expr_list();
                }
            }
            // `;`, `break`, and what no statement starts with.
            _ => self.bump(),
        }
    }

    pub(super) fn if_statement(&mut self) {
        self.bump();
        self.expr(false);
        self.eat(Tok::Then);
        self.block();
        loop {
            match self.tok.tok {
                Tok::Elseif => {
                    self.bump();
                    self.expr(false);
                    self.eat(Tok::Then);
                    self.block();
                }
                Tok::Else => {
                    self.bump();
                    self.block();
                }
                _ => break,
            }
        }
        self.eat(Tok::End);
    }

    pub(super) fn for_statement(&mut self) {
        self.bump();
        self.variable();
        if self.eat(Tok::Assign) {
            self.expr_list();
        } else {
            while self.eat(Tok::Comma) {
                self.variable();
            }
            self.eat(Tok::In);
            self.expr_list();
        }
        self.eat(Tok::Do);
        self.block();
        self.eat(Tok::End);
    }

    /// After `local` or `global`: a function or names with attributes.
    pub(super) fn declaration(&mut self) {
        if self.eat(Tok::Function) {
            self.variable();
            self.function_body();
            return;
        }
        self.attribute();
        loop {
            self.variable();
            self.attribute();
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        if self.eat(Tok::Assign) {
            self.expr_list();
        }
    }

    /// `<name>`, whose name counts as a variable.
    pub(super) fn attribute(&mut self) {
        if self.eat(Tok::Lt) {
            self.variable();
            self.eat(Tok::Gt);
        }
    }

    /// `name{.field}[:method]` after `function`.
    pub(super) fn function_name(&mut self) {
        let start = self.tok.start;
        let mut prefix = match self.tok.tok {
            Tok::Name => {
                let range = self.range();
                self.variable();
                Prefix::Name(range)
            }
            _ => return,
        };
        while self.tok.tok == Tok::Dot {
            let of_calls = self.is_tools_calls(&prefix, start);
            self.bump();
            prefix = self.dot_field(prefix, of_calls);
        }
        if self.eat(Tok::Colon) {
            self.other_name();
        }
    }

    /// `(params) block end`
    pub(super) fn function_body(&mut self) {
        if self.eat(Tok::LParen) {
            loop {
                // `...` may have a name (Lua 5.5).
                if !self.eat(Tok::Ellipsis) && self.tok.tok != Tok::Name {
                    break;
                }
                self.variable();
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
            self.eat(Tok::RParen);
        }
        self.block();
        self.eat(Tok::End);
    }

    pub(super) fn expr_list(&mut self) {
        self.expr(false);
        while self.eat(Tok::Comma) {
            self.expr(false);
        }
    }

    /// An expression; `want` asks for the [`Arg`] of a lone table.
    pub(super) fn expr(&mut self, want: bool) -> Expr {
        let start = self.tok.start;
        if self.depth > MAX_DEPTH {
            if !matches!(
                self.tok.tok,
                Tok::Eof | Tok::End | Tok::RParen | Tok::RBrace
            ) {
                self.bump();
            }
            return Expr {
                range: start..self.prev_end.max(start),
                shape: Shape::Other,
            };
        }
        self.depth += 1;
        let mut shape = self.operand(want);
        while matches!(
            self.tok.tok,
            Tok::BinOp
                | Tok::Minus
                | Tok::Tilde
                | Tok::Lt
                | Tok::Gt
                | Tok::Star
                | Tok::And
                | Tok::Or
        ) {
            self.bump();
            self.operand(false);
            shape = Shape::Other;
        }
        self.depth -= 1;
        Expr {
            range: start..self.prev_end.max(start),
            shape,
        }
    }

    /// A unary operator's operand, or a simple expression.
    pub(super) fn operand(&mut self, want: bool) -> Shape {
        let shape = match self.tok.tok {
            Tok::Not | Tok::Minus | Tok::Tilde | Tok::Hash => {
                self.bump();
                self.expr(false);
                return Shape::Other;
            }
            Tok::Number => Shape::Literal("number"),
            Tok::True | Tok::False => Shape::Literal("boolean"),
            Tok::Nil => Shape::Literal("nil"),
            Tok::Str => Shape::Str(self.tok.string),
            Tok::Ellipsis => Shape::Other,
            Tok::Function => {
                self.bump();
                self.function_body();
                return Shape::Literal("function");
            }
            Tok::LBrace => return Shape::Table(self.table(want)),
            Tok::Name if self.at_global() && !self.peek_suffix() => Shape::Global,
            Tok::Name | Tok::LParen => {
                self.suffixed();
                return Shape::Other;
            }
            // A missing expression: nothing is consumed.
            _ => return Shape::Other,
        };
        self.bump();
        shape
    }

    /// A name or parenthesized expression, then its fields, indexes and calls.
    pub(super) fn suffixed(&mut self) {
        let start = self.tok.start;
        let mut prefix = if self.at_global() {
            self.bump();
            Prefix::Other
        } else if self.tok.tok == Tok::Name {
            let range = self.range();
            self.variable();
            Prefix::Name(range)
        } else {
            self.bump();
            self.expr(false);
            self.eat(Tok::RParen);
            Prefix::Other
        };
        loop {
            prefix = match self.tok.tok {
                Tok::Dot => {
                    let of_calls = self.is_tools_calls(&prefix, start);
                    self.bump();
                    self.dot_field(prefix, of_calls)
                }
                Tok::LBracket => {
                    let of_calls = self.is_tools_calls(&prefix, start);
                    self.bump();
                    let key = self.expr(false);
                    self.eat(Tok::RBracket);
                    if of_calls {
                        if let Some(lit) = self.string_lit(&key) {
                            self.facts.calls_reads.push(CallsRead {
                                key: lit.value,
                                range: lit.content,
                            });
                        }
                    }
                    Prefix::Other
                }
                Tok::Colon => {
                    self.bump();
                    let method = self.other_name();
                    let to_model = method.is_some_and(|m| MESSAGE_METHODS.contains(&self.text(&m)));
                    self.call(None, to_model);
                    Prefix::Other
                }
                Tok::LParen | Tok::LBrace | Tok::Str => {
                    let to_model = matches!(prefix, Prefix::NameDot(..))
                        && self.stripped_is(start, "models.infer");
                    let callee = match prefix {
                        Prefix::Name(name) => Some((self.text(&name).to_owned(), name)),
                        Prefix::NameDot(table, field) => Some((
                            format!("{}.{}", self.text(&table), self.text(&field)),
                            table.start..field.end,
                        )),
                        Prefix::Other => None,
                    };
                    self.call(callee, to_model);
                    Prefix::Other
                }
                _ => return,
            };
        }
    }

    /// After a `.`: its field name; records a `tools.calls.X` read when the
    /// prefix was `tools.calls` (`of_calls`).
    fn dot_field(&mut self, prefix: Prefix, of_calls: bool) -> Prefix {
        let Some(field) = self.other_name() else {
            return Prefix::Other;
        };
        if of_calls {
            self.facts.calls_reads.push(CallsRead {
                key: self.text(&field).to_owned(),
                range: self.file(&field),
            });
        }
        match prefix {
            Prefix::Name(name) => Prefix::NameDot(name, field),
            _ => Prefix::Other,
        }
    }

    /// True when the expression `prefix` from `start` reads `tools.calls`.
    fn is_tools_calls(&self, prefix: &Prefix, start: usize) -> bool {
        matches!(prefix, Prefix::NameDot(..)) && self.stripped_is(start, "tools.calls")
    }

    /// True when the code from `start` to the last token, without spaces and
    /// tabs, is `expected`.
    pub(super) fn stripped_is(&self, start: usize, expected: &str) -> bool {
        let mut written = self
            .text(&(start..self.prev_end))
            .bytes()
            .filter(|c| !matches!(c, b' ' | b'\t'));
        let mut expected = expected.bytes();
        loop {
            match (written.next(), expected.next()) {
                (None, None) => return true,
                (a, b) if a == b => {}
                _ => return false,
            }
        }
    }
}
