//! What the static checks and the editor features need from one Lua block,
//! read with tree-sitter-lua: the calls of the Lua API whose arguments are
//! literals, and the free identifiers (candidate alias and model globals).

use std::cell::RefCell;
use std::ops::Range;

use promptforge_syntax::LuaBlock;
use tree_sitter::{Node, Parser};

use crate::read_budget::Unread;

/// A string literal without escapes, with its ranges in the file text.
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
    /// Byte range of the name in the file text.
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
    /// Byte range in the file text.
    pub range: Range<usize>,
}

/// A `tools.calls.X` or `tools.calls['X']` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallsRead {
    /// The key read.
    pub key: String,
    /// Byte range of the key in the file text.
    pub range: Range<usize>,
}

/// A string literal that goes to a model: an argument of a conversation's
/// `:system`, `:user` or `:assistant`, or of `models.infer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelText {
    /// Byte range of the whole literal in the file text.
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

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Reads the facts of one block (an empty set when the Lua grammar cannot be loaded).
pub fn read(block: &LuaBlock) -> LuaFacts {
    read_code(&block.code, block.code_range.start)
}

/// Reads the facts of Lua `code` that starts at byte `base` of the file text.
pub fn read_code(code: &str, base: usize) -> LuaFacts {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            if parser
                .set_language(&tree_sitter_lua::LANGUAGE.into())
                .is_err()
            {
                return LuaFacts::default();
            }
            *slot = Some(parser);
        }
        let Some(parser) = slot.as_mut() else {
            return LuaFacts::default();
        };
        let Some(tree) = parser.parse(code, None) else {
            return LuaFacts::default();
        };
        let mut reader = Reader {
            code,
            base,
            facts: LuaFacts::default(),
        };
        reader.walk(tree.root_node());
        let mut facts = reader.facts;
        // A chain `m:system(a):user(b)` visits its outer call, `:user`, first.
        facts.model_texts.sort_by_key(|text| text.range.start);
        facts.shrink_to_fit();
        facts
    })
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

struct Reader<'a> {
    code: &'a str,
    base: usize,
    facts: LuaFacts,
}

impl Reader<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        self.code.get(node.byte_range()).unwrap_or("")
    }

    fn file_range(&self, node: Node<'_>) -> Range<usize> {
        self.base + node.start_byte()..self.base + node.end_byte()
    }

    /// Visits every node in source order with one cursor, keeping the kinds of
    /// the ancestors (an identifier's parent and its field there tell whether it
    /// is a variable).
    fn walk(&mut self, root: Node<'_>) {
        let mut cursor = root.walk();
        let mut ancestors: Vec<&str> = Vec::new();
        loop {
            let node = cursor.node();
            let kind = node.kind();
            match kind {
                "function_call" => self.call(node),
                "identifier" if is_variable(ancestors.last().copied(), cursor.field_name()) => {
                    self.facts.identifiers.push(Identifier {
                        name: self.text(node).to_owned(),
                        range: self.file_range(node),
                    })
                }
                "dot_index_expression" | "bracket_index_expression" => self.calls_read(node),
                _ => {}
            }
            if cursor.goto_first_child() {
                ancestors.push(kind);
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return;
                }
                ancestors.pop();
            }
        }
    }

    fn call(&mut self, node: Node<'_>) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        if self.goes_to_a_model(name) {
            self.model_texts(node);
        }
        let callee = match name.kind() {
            "identifier" => self.text(name).to_owned(),
            "dot_index_expression" => {
                let table = name.child_by_field_name("table");
                let field = name.child_by_field_name("field");
                match (table, field) {
                    (Some(t), Some(f)) if t.kind() == "identifier" => {
                        format!("{}.{}", self.text(t), self.text(f))
                    }
                    _ => return,
                }
            }
            _ => return,
        };
        let mut args = Vec::new();
        if let Some(arguments) = node.child_by_field_name("arguments") {
            let mut cursor = arguments.walk();
            if arguments.kind() == "arguments" {
                for arg in arguments.named_children(&mut cursor) {
                    if arg.kind() != "comment" {
                        args.push(self.arg(arg));
                    }
                }
            } else {
                args.push(self.arg(arguments));
            }
        }
        self.facts.calls.push(ApiCall {
            callee,
            callee_range: self.file_range(name),
            args,
        });
    }

    /// True for a callee whose string arguments go to a model: a message
    /// method (`m:user(...)`) or `models.infer`.
    fn goes_to_a_model(&self, name: Node<'_>) -> bool {
        match name.kind() {
            "method_index_expression" => name
                .child_by_field_name("method")
                .is_some_and(|m| MESSAGE_METHODS.contains(&self.text(m))),
            "dot_index_expression" => self.text(name).replace([' ', '\t'], "") == "models.infer",
            _ => false,
        }
    }

    /// Records the string literal arguments of a call whose texts go to a model
    /// (long strings and strings with escapes too).
    fn model_texts(&mut self, node: Node<'_>) {
        let Some(arguments) = node.child_by_field_name("arguments") else {
            return;
        };
        let mut cursor = arguments.walk();
        let strings: Vec<Node<'_>> = if arguments.kind() == "arguments" {
            arguments.named_children(&mut cursor).collect()
        } else {
            vec![arguments]
        };
        for string in strings
            .into_iter()
            .filter(|n| n.kind() == "string" && !n.has_error())
        {
            let start = string.child_by_field_name("start");
            let end = string.child_by_field_name("end");
            let (Some(start), Some(end)) = (start, end) else {
                continue;
            };
            if end.is_missing() {
                continue;
            }
            self.facts.model_texts.push(ModelText {
                range: self.file_range(string),
                content: self.base + start.end_byte()..self.base + end.start_byte(),
            });
        }
    }

    fn arg(&self, node: Node<'_>) -> Arg {
        match node.kind() {
            "string" => match self.string(node) {
                Some(lit) => Arg::Str(lit),
                None => Arg::Other(self.file_range(node)),
            },
            "table_constructor" => {
                let mut strings = Vec::new();
                let mut named = Vec::new();
                let mut only_strings = true;
                let mut cursor = node.walk();
                for field in node.named_children(&mut cursor) {
                    if field.kind() == "comment" {
                        continue;
                    }
                    let name = field.child_by_field_name("name");
                    let value = field.child_by_field_name("value");
                    if let (Some(name), Some(value)) = (name, value) {
                        if name.kind() == "identifier" {
                            named.push(NamedField {
                                name: self.text(name).to_owned(),
                                name_range: self.file_range(name),
                                value: self.arg(value),
                            });
                        }
                    }
                    match value
                        .filter(|_| name.is_none())
                        .and_then(|v| self.string(v))
                    {
                        Some(lit) => strings.push(lit),
                        None => only_strings = false,
                    }
                }
                Arg::Table {
                    strings,
                    only_strings,
                    named,
                    range: self.file_range(node),
                }
            }
            "number" => Arg::Literal("number", self.file_range(node)),
            "true" | "false" => Arg::Literal("boolean", self.file_range(node)),
            "nil" => Arg::Literal("nil", self.file_range(node)),
            "function_definition" => Arg::Literal("function", self.file_range(node)),
            _ => Arg::Other(self.file_range(node)),
        }
    }

    /// A string literal without escape sequences.
    fn string(&self, node: Node<'_>) -> Option<StringLit> {
        if node.kind() != "string" || node.has_error() {
            return None;
        }
        let start = node.child_by_field_name("start")?;
        let end = node.child_by_field_name("end")?;
        if start.kind() == "[[" || end.is_missing() {
            // Long strings drop a leading newline; keep to plain quoted strings.
            return None;
        }
        let content = start.end_byte()..end.start_byte();
        let value = self.code.get(content.clone())?;
        if let Some(inner) = node.child_by_field_name("content") {
            let mut cursor = inner.walk();
            if inner
                .named_children(&mut cursor)
                .any(|c| c.kind() == "escape_sequence")
            {
                return None;
            }
        }
        Some(StringLit {
            value: value.to_owned(),
            range: self.file_range(node),
            content: self.base + content.start..self.base + content.end,
        })
    }

    /// Records `tools.calls.X` and `tools.calls['X']`.
    fn calls_read(&mut self, node: Node<'_>) {
        let Some(table) = node.child_by_field_name("table") else {
            return;
        };
        if table.kind() != "dot_index_expression"
            || self.text(table).replace([' ', '\t'], "") != "tools.calls"
        {
            return;
        }
        let key = if node.kind() == "dot_index_expression" {
            node.child_by_field_name("field")
                .map(|f| (self.text(f).to_owned(), self.file_range(f)))
        } else {
            node.child_by_field_name("field")
                .and_then(|f| self.string(f))
                .map(|lit| (lit.value, lit.content))
        };
        if let Some((key, range)) = key {
            self.facts.calls_reads.push(CallsRead { key, range });
        }
    }
}

/// True when an identifier is used as a variable, given the kind of its parent
/// and the field it fills there.
fn is_variable(parent: Option<&str>, field: Option<&str>) -> bool {
    match parent {
        None => true,
        Some("dot_index_expression") => field != Some("field"),
        Some("method_index_expression") => field != Some("method"),
        Some("field") => field != Some("name"),
        Some("goto_statement" | "label_statement") => false,
        Some(_) => true,
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
