//! The facts reader promptforge-analysis used before its one-pass reader:
//! tree-sitter-lua's tree, walked. Kept only as the oracle of
//! lua_facts_differential.rs.

use std::cell::RefCell;
use std::ops::Range;

use promptforge_analysis::lua_facts::{
    ApiCall, Arg, CallsRead, Identifier, LuaFacts, ModelText, NamedField, StringLit,
    MESSAGE_METHODS,
};
use tree_sitter::{Node, Parser};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The facts tree-sitter-lua's tree gives for `code` at file offset `base`, and
/// whether that tree has an error.
pub fn read_code(code: &str, base: usize) -> (LuaFacts, bool) {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let parser = slot.get_or_insert_with(|| {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_lua::LANGUAGE.into())
                .expect("the Lua grammar loads");
            parser
        });
        let tree = parser.parse(code, None).expect("tree-sitter parses");
        let mut reader = Reader {
            code,
            base,
            facts: LuaFacts::default(),
        };
        reader.walk(tree.root_node());
        let mut facts = reader.facts;
        facts.model_texts.sort_by_key(|text| text.range.start);
        (facts, tree.root_node().has_error())
    })
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
