//! The position-keeping YAML parse: saphyr-parser's events folded into a small tree whose every
//! node carries its exact byte range in the whole file text.
//!
//! Duplicate keys are kept (the validator reports them). Aliases point at their anchored node;
//! nesting deeper than [`MAX_DEPTH`] or aliases expanding past [`MAX_EXPANDED_NODES`] are
//! reported as YAML errors, so every later walk of the tree is bounded.

use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use super::messages;
use super::spans::{self, CharOffsets};

/// Deepest nesting of collections accepted (serde_yaml's limit).
pub const MAX_DEPTH: usize = 128;
/// Most nodes the aliases of one document may expand to.
pub const MAX_EXPANDED_NODES: usize = 100_000;

/// How a scalar was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Plain: resolved by the YAML 1.2 core schema.
    Plain,
    /// Single or double quoted: always a string.
    Quoted,
    /// Literal `|` or folded `>`: always a string.
    Block,
}

/// A scalar's text and how it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The scalar's value after unquoting, unescaping and folding.
    pub value: String,
    /// How it was written.
    pub style: Style,
    /// Its tag, resolved (`tag:yaml.org,2002:str` for `!!str`).
    pub tag: Option<String>,
    /// File byte offset where `value` appears verbatim (None when escapes, folding or a block
    /// style make the written text differ from the value).
    pub value_start: Option<usize>,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A scalar.
    Scalar(Scalar),
    /// A sequence.
    Seq(Vec<Node>),
    /// A map, its pairs in document order, duplicate keys kept.
    Map(Vec<(Node, Node)>),
    /// An alias (`*name`) of an earlier anchored node.
    Alias(Rc<Node>),
}

/// One YAML node with its byte range in the whole file text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// What it is.
    pub kind: Kind,
    /// Its byte range (a quoted scalar with its quotes; a block collection from its first
    /// character to the end of its last content).
    pub range: Range<usize>,
    /// How many nodes it stands for once aliases are expanded.
    weight: usize,
}

impl Node {
    /// The node's kind, through an alias.
    pub fn kind(&self) -> &Kind {
        match &self.kind {
            Kind::Alias(target) => &target.kind,
            kind => kind,
        }
    }

    /// The scalar, through an alias.
    pub fn scalar(&self) -> Option<&Scalar> {
        match self.kind() {
            Kind::Scalar(scalar) => Some(scalar),
            _ => None,
        }
    }

    /// File byte offset where the scalar's value appears verbatim at this node's place.
    pub fn value_start(&self) -> Option<usize> {
        match &self.kind {
            Kind::Scalar(scalar) => scalar.value_start,
            _ => None,
        }
    }
}

/// YAML that does not parse.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    /// The parser's message, without its position suffix.
    pub message: String,
    /// File byte offset the parser names.
    pub offset: usize,
}

/// Parses the YAML text at `yaml` inside `text`. `Ok(None)` for a stream with no document.
pub fn parse(text: &str, yaml: Range<usize>) -> Result<Option<Node>, YamlError> {
    let source = text.get(yaml.clone()).unwrap_or("");
    let mut builder = Builder::new(text, yaml.start, source);
    for event in Parser::new_from_str(source) {
        match event {
            Ok((event, span)) => {
                builder.event(event, span)?;
                if builder.finished {
                    break;
                }
            }
            Err(error) => {
                let offset = builder.byte(error.marker().index());
                return Err(YamlError {
                    message: error.info().to_owned(),
                    offset,
                });
            }
        }
    }
    Ok(builder.root)
}

/// A collection being built.
struct Frame {
    start: usize,
    flow: bool,
    anchor: usize,
    items: Vec<Node>,
    is_map: bool,
}

/// Folds events into the tree.
struct Builder<'a> {
    text: &'a str,
    base: usize,
    /// saphyr's character indexes to byte offsets in the YAML text.
    offsets: CharOffsets<'a>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Rc<Node>>,
    root: Option<Node>,
    documents: usize,
    expanded: usize,
    /// File byte offset of the end of the previous event.
    previous_end: usize,
    finished: bool,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str, base: usize, source: &'a str) -> Self {
        Builder {
            text,
            base,
            offsets: CharOffsets::new(source),
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
            documents: 0,
            expanded: 0,
            previous_end: base,
            finished: false,
        }
    }

    /// File byte offset of a character index of the YAML text.
    fn byte(&mut self, char_index: usize) -> usize {
        self.base + self.offsets.byte(char_index)
    }

    fn error(&self, message: &str, offset: usize) -> YamlError {
        YamlError {
            message: message.to_owned(),
            offset,
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        let start = self.byte(span.start.index());
        // saphyr's spans may take in the blanks and the comment after a node: each kind of
        // event is cut back to its own text.
        let raw_end = self.byte(span.end.index()).max(start);
        let raw = self.text.get(start..raw_end).unwrap_or("");
        let end = start + raw.trim_end_matches(spans::BLANKS).len();
        // Where the block scalar indicator search of the next event starts.
        let mut next_end = end;
        match event {
            Event::StreamEnd => self.finished = true,
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(self.error(messages::MORE_THAN_ONE_DOCUMENT, start));
                }
            }
            Event::Scalar(value, style, anchor, tag) => {
                let end = match style {
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                        start + spans::quoted_len(raw).unwrap_or(end - start)
                    }
                    _ => end,
                };
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                let node = self.scalar(value.into_owned(), style, tag, start..end);
                next_end = node.range.end.max(start);
                self.complete(node, anchor);
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(self.error(messages::RECURSION_LIMIT, start));
                }
                self.stack.push(Frame {
                    start,
                    flow: spans::skip_properties(raw).starts_with(['[', '{']),
                    anchor,
                    items: Vec::new(),
                    is_map: matches!(event, Event::MappingStart(..)),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(frame) = self.stack.pop() {
                    let anchor = frame.anchor;
                    let end = if raw.starts_with([']', '}']) {
                        start + 1
                    } else {
                        end
                    };
                    let node = self.collection(frame, end);
                    self.complete(node, anchor);
                }
            }
            Event::Alias(id) => {
                let Some(target) = self.anchors.get(&id).cloned() else {
                    return Err(self.error(messages::RECURSIVE_ALIAS, start));
                };
                self.expanded = self.expanded.saturating_add(target.weight);
                if self.expanded > MAX_EXPANDED_NODES {
                    return Err(self.error(messages::REPETITION_LIMIT, start));
                }
                let weight = target.weight;
                let len = raw
                    .find(|c: char| c.is_whitespace() || ",[]{}".contains(c))
                    .unwrap_or(raw.len());
                let node = Node {
                    kind: Kind::Alias(target),
                    range: start..start + len,
                    weight,
                };
                next_end = node.range.end;
                self.complete(node, 0);
            }
            Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
        }
        self.previous_end = next_end;
        Ok(())
    }

    /// Hands a finished node to its parent (or makes it the root) and records its anchor.
    fn complete(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, Rc::new(node.clone()));
        }
        match self.stack.last_mut() {
            Some(frame) => frame.items.push(node),
            None => self.root = Some(node),
        }
    }

    fn collection(&self, frame: Frame, end: usize) -> Node {
        let content_end = frame
            .items
            .iter()
            .map(|n| n.range.end)
            .max()
            .unwrap_or(frame.start);
        let end = if frame.flow {
            end.max(frame.start)
        } else {
            content_end.max(frame.start)
        };
        let weight = frame
            .items
            .iter()
            .fold(1usize, |w, n| w.saturating_add(n.weight));
        let kind = if frame.is_map {
            let mut pairs = Vec::with_capacity(frame.items.len() / 2);
            let mut items = frame.items.into_iter();
            while let Some(key) = items.next() {
                let value = items.next().unwrap_or_else(|| empty_scalar(key.range.end));
                pairs.push((key, value));
            }
            Kind::Map(pairs)
        } else {
            Kind::Seq(frame.items)
        };
        Node {
            kind,
            range: frame.start..end,
            weight,
        }
    }

    fn scalar(
        &self,
        value: String,
        style: ScalarStyle,
        tag: Option<String>,
        span: Range<usize>,
    ) -> Node {
        let written = match style {
            ScalarStyle::Plain => Style::Plain,
            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
            ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
        };
        let range = match written {
            Style::Plain if value.is_empty() && tag.is_none() => {
                let at = spans::empty_value_position(self.text, span.start);
                at..at
            }
            Style::Block => spans::block_scalar_range(self.text, self.previous_end, span),
            _ => span,
        };
        let raw = self.text.get(range.clone()).unwrap_or("");
        let value_start = match style {
            ScalarStyle::Plain if raw.ends_with(value.as_str()) => Some(range.end - value.len()),
            ScalarStyle::SingleQuoted
                if !value.contains('\'') && raw.ends_with(&format!("'{value}'")) =>
            {
                Some(range.end - value.len() - 1)
            }
            ScalarStyle::DoubleQuoted
                if !value.contains(['\\', '"']) && raw.ends_with(&format!("\"{value}\"")) =>
            {
                Some(range.end - value.len() - 1)
            }
            _ => None,
        };
        let scalar = Scalar {
            value,
            style: written,
            tag,
            value_start,
        };
        Node {
            kind: Kind::Scalar(scalar),
            range,
            weight: 1,
        }
    }
}

/// An empty null value at `at` (a key with no value at the end of a map).
fn empty_scalar(at: usize) -> Node {
    let scalar = Scalar {
        value: String::new(),
        style: Style::Plain,
        tag: None,
        value_start: Some(at),
    };
    Node {
        kind: Kind::Scalar(scalar),
        range: at..at,
        weight: 1,
    }
}
