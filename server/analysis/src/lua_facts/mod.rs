//! What the static checks and the editor features need from one Lua block:
//! the calls of the Lua API whose arguments are literals, and the free
//! identifiers (candidate alias and model globals). Read in one pass over the
//! block's tokens ([`lexer`], [`reader`], [`arguments`]), without a syntax tree.
//!
//! Every range is relative to the start of the block's code ([`read`]), so a
//! block that moves (an edit above it) keeps its facts unchanged; [`in_file`]
//! places a range in the file for a block whose code starts at a given byte.

mod arguments;
mod lexer;
mod reader;

use std::ops::Range;

use promptforge_syntax::LuaBlock;

use crate::read_budget::Unread;

/// A string literal without escapes, with its ranges in the block's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringLit {
    /// The string's value.
    pub value: String,
    /// Byte range of the whole literal, quotes included.
    pub range: Range<usize>,
    /// Byte range of the value between the quotes.
    pub content: Range<usize>,
}

/// One argument of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A string literal without escapes.
    Str(StringLit),
    /// A table constructor: its positional string literals, and whether every
    /// field is one.
    Table {
        /// The positional string literals, in order.
        strings: Vec<StringLit>,
        /// True when the table holds only positional string literals.
        only_strings: bool,
        /// The fields written `name = value`, in order.
        named: Vec<NamedField>,
        /// Byte range of the constructor.
        range: Range<usize>,
    },
    /// A number, boolean, nil or function literal, with its Lua type name.
    Literal(&'static str, Range<usize>),
    /// Anything else (a variable, a call, a string with escapes, ...).
    Other(Range<usize>),
}

/// A table field written `name = value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedField {
    /// The field's name.
    pub name: String,
    /// Byte range of the name.
    pub name_range: Range<usize>,
    /// The value.
    pub value: Arg,
}

/// A call of a global function or of a member of a global table (`jump(...)`,
/// `tools.add(...)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiCall {
    /// The callee as written: `jump`, `tools.add`.
    pub callee: String,
    /// Byte range of the callee expression.
    pub callee_range: Range<usize>,
    /// The arguments, in order.
    pub args: Vec<Arg>,
}

impl ApiCall {
    /// The first argument when it is a string literal.
    pub fn first_string(&self) -> Option<&StringLit> {
        match self.args.first() {
            Some(Arg::Str(lit)) => Some(lit),
            _ => None,
        }
    }
}

/// An identifier used as a variable (not a field name, method name or table key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identifier {
    /// The name.
    pub name: String,
    /// Byte range of the identifier.
    pub range: Range<usize>,
}

/// A `tools.calls.X` or `tools.calls['X']` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallsRead {
    /// The key read.
    pub key: String,
    /// Byte range of the key.
    pub range: Range<usize>,
}

/// A string literal that goes to a model: an argument of a conversation's
/// `:system`, `:user` or `:assistant`, or of `models.infer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelText {
    /// Byte range of the whole literal.
    pub range: Range<usize>,
    /// Byte range of its text between the delimiters (escapes as written).
    pub content: Range<usize>,
}

/// The methods of a conversation whose string argument goes to a model.
pub const MESSAGE_METHODS: [&str; 3] = ["system", "user", "assistant"];

/// The facts of one Lua block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LuaFacts {
    /// Calls of globals and global-table members, in source order.
    pub calls: Vec<ApiCall>,
    /// Identifiers used as variables, in source order.
    pub identifiers: Vec<Identifier>,
    /// `tools.calls` reads with a literal key, in source order.
    pub calls_reads: Vec<CallsRead>,
    /// String literals that go to a model, in source order.
    pub model_texts: Vec<ModelText>,
    /// Why the block was not read ([`crate::read_budget`]): then it has no
    /// facts, and what it may do is unknown.
    pub unread: Option<Unread>,
}

/// Reads the facts of one block of the file `text`, with ranges relative to
/// its code's start.
pub fn read(text: &str, block: &LuaBlock) -> LuaFacts {
    read_code(block.code(text), 0)
}

/// The file range of `range`, a range of a block whose code starts at byte `code_start`.
pub fn in_file(code_start: usize, range: &Range<usize>) -> Range<usize> {
    code_start + range.start..code_start + range.end
}

/// Reads the facts of Lua `code`, with ranges counted from `base` (0: relative
/// to the code, as the analysis keeps them).
pub fn read_code(code: &str, base: usize) -> LuaFacts {
    let mut facts = reader::read(code, base);
    facts.shrink_to_fit();
    facts
}

impl LuaFacts {
    /// Drops the spare capacity its vectors grew while reading: a document keeps
    /// the facts of every block for as long as it is open.
    fn shrink_to_fit(&mut self) {
        fn shrink_arg(arg: &mut Arg) {
            if let Arg::Table { strings, named, .. } = arg {
                strings.shrink_to_fit();
                named.shrink_to_fit();
                for field in named {
                    shrink_arg(&mut field.value);
                }
            }
        }
        self.calls.shrink_to_fit();
        for call in &mut self.calls {
            call.args.shrink_to_fit();
            call.args.iter_mut().for_each(shrink_arg);
        }
        self.identifiers.shrink_to_fit();
        self.calls_reads.shrink_to_fit();
        self.model_texts.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texts_that_go_to_a_model_are_found() {
        let code = "local m = messages.new():system('Be brief.'):user([[\nWhat is Rust?]])\nm:assistant(\"a\\n\")\nlocal r = models.infer('hello')\nlog('not to a model')\nm:user(args)";
        let facts = read_code(code, 100);
        let texts: Vec<&str> = facts
            .model_texts
            .iter()
            .map(|t| &code[t.content.start - 100..t.content.end - 100])
            .collect();
        assert_eq!(texts, ["Be brief.", "\nWhat is Rust?", "a\\n", "hello"]);
        let first = &facts.model_texts[0];
        assert_eq!(
            &code[first.range.start - 100..first.range.end - 100],
            "'Be brief.'"
        );
    }
}
