//! The arguments of calls: what a recorded call's [`Arg`]s are, and which
//! string arguments go to a model (the second half of [`Reader`]).

use std::ops::Range;

use super::lexer::Tok;
use super::reader::{Expr, Reader, Shape};
use super::{ApiCall, Arg, ModelText, NamedField, StringLit};

impl Reader<'_> {
    /// A call's arguments; a call of a global or global-table member (`callee`)
    /// is recorded before the calls inside its arguments, and `to_model` records
    /// its string arguments as model texts.
    pub(super) fn call(&mut self, callee: Option<(String, Range<usize>)>, to_model: bool) {
        let slot = callee.map(|(callee, range)| {
            self.facts.calls.push(ApiCall {
                callee,
                callee_range: self.file(&range),
                args: Vec::new(),
            });
            self.facts.calls.len() - 1
        });
        let want = slot.is_some();
        let mut args = Vec::new();
        let mut take = |reader: &mut Self, expr: Expr| {
            if let (true, Shape::Str(string)) = (to_model, &expr.shape) {
                if !string.broken {
                    reader.facts.model_texts.push(ModelText {
                        range: reader.file(&expr.range),
                        content: reader.file(&(string.content_start..string.content_end)),
                    });
                }
            }
            if want && !matches!(expr.shape, Shape::Global) {
                args.push(reader.arg(expr));
            }
        };
        if self.eat(Tok::LParen) {
            if self.tok.tok != Tok::RParen {
                loop {
                    let expr = self.expr(want);
                    take(self, expr);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
            }
            self.eat(Tok::RParen);
        } else {
            let expr = self.expr_one(want);
            take(self, expr);
        }
        if let Some(slot) = slot {
            self.facts.calls[slot].args = args;
        }
    }

    /// A lone table or string argument (`f{...}`, `f"..."`).
    pub(super) fn expr_one(&mut self, want: bool) -> Expr {
        let start = self.tok.start;
        let shape = self.operand(want);
        Expr {
            range: start..self.prev_end,
            shape,
        }
    }

    /// `{ fields }`; its [`Arg`] when `want`.
    pub(super) fn table(&mut self, want: bool) -> Option<Arg> {
        let start = self.tok.start;
        self.bump();
        let mut strings = Vec::new();
        let mut named = Vec::new();
        let mut only_strings = true;
        while !matches!(self.tok.tok, Tok::RBrace | Tok::Eof) {
            if self.tok.tok == Tok::LBracket {
                self.bump();
                // `[k] = v` names its field `k` when `k` is a lone identifier.
                let key = if self.tok.tok == Tok::Name
                    && !self.at_global()
                    && self.peek() == Tok::RBracket
                {
                    self.other_name()
                } else {
                    self.expr(false);
                    None
                };
                self.eat(Tok::RBracket);
                self.eat(Tok::Assign);
                let value = self.expr(want);
                if let (true, Some(key)) = (want, key) {
                    named.push(self.named_field(key, value));
                }
                only_strings = false;
            } else if self.tok.tok == Tok::Name && self.peek() == Tok::Assign {
                let global = self.at_global();
                let key = self.range();
                self.bump();
                self.bump();
                let value = self.expr(want);
                if want && !global {
                    named.push(self.named_field(key, value));
                }
                only_strings = false;
            } else {
                let value = self.expr(want);
                match want.then(|| self.string_lit(&value)).flatten() {
                    Some(lit) => strings.push(lit),
                    None => only_strings = false,
                }
            }
            if !self.eat(Tok::Comma) && !self.eat(Tok::Semi) {
                break;
            }
        }
        self.eat(Tok::RBrace);
        want.then(|| Arg::Table {
            strings,
            only_strings,
            named,
            range: self.file(&(start..self.prev_end)),
        })
    }

    pub(super) fn named_field(&self, key: Range<usize>, value: Expr) -> NamedField {
        NamedField {
            name: self.text(&key).to_owned(),
            name_range: self.file(&key),
            value: self.arg(value),
        }
    }

    /// The [`Arg`] of an argument or field value.
    pub(super) fn arg(&self, expr: Expr) -> Arg {
        let range = self.file(&expr.range);
        match expr.shape {
            Shape::Str(_) => match self.string_lit(&expr) {
                Some(lit) => Arg::Str(lit),
                None => Arg::Other(range),
            },
            Shape::Table(Some(table)) => table,
            Shape::Literal(kind) => Arg::Literal(kind, range),
            Shape::Table(None) | Shape::Global | Shape::Other => Arg::Other(range),
        }
    }

    /// A lone quoted string without escapes, closed and valid.
    pub(super) fn string_lit(&self, expr: &Expr) -> Option<StringLit> {
        let Shape::Str(string) = &expr.shape else {
            return None;
        };
        if string.long || string.escapes || string.broken {
            return None;
        }
        let content = string.content_start..string.content_end;
        Some(StringLit {
            value: self.text(&content).to_owned(),
            range: self.file(&expr.range),
            content: self.file(&content),
        })
    }
}
