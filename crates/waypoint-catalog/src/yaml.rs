//! A small, bounded YAML reader that keeps the position of every node.
//!
//! Catalog files come from users and from MCP servers we do not control, so the reader
//! refuses hostile shapes up front instead of trusting a general-purpose loader: inputs
//! over [`Limits::max_bytes`], nesting deeper than [`Limits::max_depth`], and alias
//! expansion beyond [`Limits::max_nodes`] (the "billion laughs" bomb) or beyond
//! [`Limits::max_expanded_bytes`] of text are errors. Counting nodes alone is not
//! enough: 2,000 aliases of one anchored 1 MB string are 2,000 nodes and 2 GB.
//!
//! A mapping that repeats a key is an error too: a general-purpose loader keeps one of
//! the two silently, so `effects: read` followed by `effects: destructive` would list a
//! destructive tool as read-only.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// A position in a source file: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    fn of(span: Span) -> Self {
        Self {
            line: span.start.line(),
            col: span.start.col() + 1,
        }
    }
}

/// A YAML value with the position where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Keys are kept in file order, each with its own position.
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// A short name for messages ("expected a list, found a string").
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Bounds that keep parsing safe on hostile input.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_depth: usize,
    pub max_nodes: usize,
    /// Scalar text the document may hold once every alias is expanded.
    pub max_expanded_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 64,
            max_nodes: 2_000_000,
            max_expanded_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Why a file could not be read as YAML.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub pos: Pos,
    pub message: String,
    pub kind: YamlErrorKind,
}

/// What kind of problem a [`YamlError`] is, for callers that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YamlErrorKind {
    /// Not YAML, or an alias to no anchor.
    Syntax,
    /// Over one of the [`Limits`].
    Limit,
    /// A mapping repeats a key; `first` is where the key first appears.
    DuplicateKey { first: Pos },
}

impl YamlError {
    fn new(pos: Pos, kind: YamlErrorKind, message: String) -> Self {
        Self { pos, message, kind }
    }
}

enum Frame {
    Seq(Pos, Vec<Node>, usize),
    /// Entries so far, the key waiting for its value, the anchor, and where each
    /// scalar key was first seen (a set, so a map with many keys stays linear).
    Map(
        Pos,
        Vec<(Node, Node)>,
        Option<Node>,
        usize,
        HashMap<String, Pos>,
    ),
}

/// The text a key is compared by for duplicates; `None` for complex keys.
fn scalar_key(node: &Node) -> Option<String> {
    match &node.value {
        Value::Seq(_) | Value::Map(_) => None,
        _ => Some(key_text(node)),
    }
}

/// Parses the first document of `text`; an empty file is `Null`.
#[expect(
    clippy::too_many_lines,
    reason = "one event loop; splitting it would scatter the stack discipline"
)]
pub fn parse(text: &str, limits: Limits) -> Result<Node, YamlError> {
    if text.len() > limits.max_bytes {
        return Err(YamlError::new(
            Pos { line: 1, col: 1 },
            YamlErrorKind::Limit,
            format!(
                "file is {} bytes, over the limit of {} bytes",
                text.len(),
                limits.max_bytes
            ),
        ));
    }
    let mut stack: Vec<Frame> = Vec::new();
    // Each anchor with its node count and text size, computed once: aliases add them.
    let mut anchors: HashMap<usize, (Node, usize, usize)> = HashMap::new();
    let mut nodes = 0usize;
    let mut expanded = 0usize;
    let over_budget = |pos: Pos| {
        YamlError::new(
            pos,
            YamlErrorKind::Limit,
            format!(
                "the document expands to more than {} bytes of text once aliases are expanded (the limit; docs/contracts.md); refusing",
                limits.max_expanded_bytes
            ),
        )
    };
    let mut root: Option<Node> = None;

    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| {
            YamlError::new(
                Pos {
                    line: e.marker().line(),
                    col: e.marker().col() + 1,
                },
                YamlErrorKind::Syntax,
                e.info().to_string(),
            )
        })?;
        let pos = Pos::of(span);
        let finished: Option<(Node, usize)> = match event {
            Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => None,
            Event::DocumentEnd | Event::StreamEnd => {
                if root.is_some() {
                    break;
                }
                None
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= limits.max_depth {
                    return Err(YamlError::new(
                        pos,
                        YamlErrorKind::Limit,
                        format!("nesting deeper than {} levels", limits.max_depth),
                    ));
                }
                if matches!(event, Event::SequenceStart(..)) {
                    stack.push(Frame::Seq(pos, Vec::new(), anchor));
                } else {
                    stack.push(Frame::Map(pos, Vec::new(), None, anchor, HashMap::new()));
                }
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq(p, items, anchor)) => Some((
                    Node {
                        pos: p,
                        value: Value::Seq(items),
                    },
                    anchor,
                )),
                Some(Frame::Map(p, entries, _, anchor, _)) => Some((
                    Node {
                        pos: p,
                        value: Value::Map(entries),
                    },
                    anchor,
                )),
                None => None,
            },
            Event::Scalar(text, style, anchor, _) => {
                expanded = expanded.saturating_add(text.len());
                if expanded > limits.max_expanded_bytes {
                    return Err(over_budget(pos));
                }
                Some((
                    Node {
                        pos,
                        value: scalar(&text, style),
                    },
                    anchor,
                ))
            }
            Event::Alias(id) => {
                let Some((target, cost, size)) = anchors.get(&id) else {
                    return Err(YamlError::new(
                        pos,
                        YamlErrorKind::Syntax,
                        "alias refers to an unknown anchor".into(),
                    ));
                };
                expanded = expanded.saturating_add(*size);
                if expanded > limits.max_expanded_bytes {
                    return Err(over_budget(pos));
                }
                nodes = nodes.saturating_add(*cost);
                if nodes > limits.max_nodes {
                    return Err(YamlError::new(
                        pos,
                        YamlErrorKind::Limit,
                        format!(
                            "aliases expand to more than {} nodes; refusing (alias bomb?)",
                            limits.max_nodes
                        ),
                    ));
                }
                Some((target.clone(), 0))
            }
        };
        let Some((node, anchor)) = finished else {
            continue;
        };
        nodes += 1;
        if nodes > limits.max_nodes {
            return Err(YamlError::new(
                pos,
                YamlErrorKind::Limit,
                format!("more than {} nodes", limits.max_nodes),
            ));
        }
        if anchor != 0 {
            anchors.insert(anchor, (node.clone(), count(&node), text_bytes(&node)));
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq(_, items, _)) => items.push(node),
            Some(Frame::Map(_, entries, key, _, seen)) => match key.take() {
                None => {
                    if let Some(name) = scalar_key(&node) {
                        if let Some(first) = seen.get(&name) {
                            return Err(YamlError::new(
                                node.pos,
                                YamlErrorKind::DuplicateKey { first: *first },
                                format!(
                                    "duplicate key `{name}` (first at line {}); a mapping may give a key once",
                                    first.line
                                ),
                            ));
                        }
                        seen.insert(name, node.pos);
                    }
                    *key = Some(node);
                }
                Some(k) => entries.push((k, node)),
            },
        }
    }
    Ok(root.unwrap_or(Node {
        pos: Pos { line: 1, col: 1 },
        value: Value::Null,
    }))
}

fn count(node: &Node) -> usize {
    match &node.value {
        Value::Seq(items) => 1 + items.iter().map(count).sum::<usize>(),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|(k, v)| count(k) + count(v))
                .sum::<usize>()
        }
        _ => 1,
    }
}

/// The scalar text under `node`, keys included.
fn text_bytes(node: &Node) -> usize {
    match &node.value {
        Value::Str(s) => s.len(),
        Value::Seq(items) => items.iter().map(text_bytes).sum(),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| text_bytes(k) + text_bytes(v))
            .sum(),
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => 8,
    }
}

/// Resolves a scalar per the YAML 1.2 core schema; quoted and block scalars stay strings.
fn scalar(text: &str, style: ScalarStyle) -> Value {
    if style != ScalarStyle::Plain {
        return Value::Str(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::Int(i);
    }
    let looks_numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && text.chars().any(|c| c.is_ascii_digit());
    if looks_numeric && let Ok(f) = text.parse::<f64>() {
        return Value::Float(f);
    }
    Value::Str(text.to_string())
}

/// Converts a node to JSON (for `input_schema` and `context`); keys become strings.
pub fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Str(s) => J::String(s.clone()),
        Value::Seq(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| (key_text(k), to_json(v)))
                .collect(),
        ),
    }
}

/// The text of a mapping key, whatever its scalar type.
pub fn key_text(node: &Node) -> String {
    match &node.value {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Seq(_) | Value::Map(_) => "<complex key>".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let node = parse(
            "tools:\n  - name: a\n    produces: [x]\n",
            Limits::default(),
        )
        .unwrap();
        let Value::Map(top) = &node.value else {
            panic!()
        };
        let Value::Seq(items) = &top[0].1.value else {
            panic!()
        };
        let Value::Map(entries) = &items[0].value else {
            panic!()
        };
        assert_eq!(entries[1].0.pos, Pos { line: 3, col: 5 });
    }

    #[test]
    fn refuses_an_alias_bomb() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='k' {
            text.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = c;
        }
        let err = parse(&text, Limits::default()).unwrap_err();
        assert!(err.message.contains("alias"), "{}", err.message);
    }

    #[test]
    fn duplicate_keys_name_both_lines() {
        let err = parse(
            "tools:\n  - name: a\n    effects: read\n    effects: destructive\n",
            Limits::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.kind,
            YamlErrorKind::DuplicateKey {
                first: Pos { line: 3, col: 5 }
            }
        );
        assert_eq!(err.pos.line, 4);
        // The same key in two different mappings is fine.
        assert!(parse("a: {x: 1}\nb: {x: 2}\n", Limits::default()).is_ok());
    }

    #[test]
    fn refuses_deep_nesting() {
        let text = "[".repeat(200) + &"]".repeat(200);
        let err = parse(&text, Limits::default()).unwrap_err();
        assert!(err.message.contains("nesting"));
    }

    #[test]
    fn plain_scalars_follow_the_core_schema() {
        let node = parse("[1, 1.5, true, ~, '2', x]", Limits::default()).unwrap();
        let Value::Seq(items) = node.value else {
            panic!()
        };
        let kinds: Vec<_> = items.iter().map(|n| n.value.kind()).collect();
        assert_eq!(
            kinds,
            [
                "a number",
                "a number",
                "a boolean",
                "nothing",
                "a string",
                "a string"
            ]
        );
    }
}
