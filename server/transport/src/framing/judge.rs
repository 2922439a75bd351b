//! Judging one well-framed body: a JSON-RPC message tower-lsp 0.20 decodes
//! (forwarded, as it came or normalised) or not (answered with a JSON-RPC error).
//!
//! tower-lsp stops reading at the first body it cannot decode, so a body is
//! forwarded only when it is a JSON object with `"jsonrpc": "2.0"`, a valid `id`
//! (an i64, a string or null), no member given twice, and either a string
//! `method` (a request or notification) or a `result` or a well-formed `error`
//! (a response). The body is read once, without building its values: every
//! string and number is still parsed in full, as tower-lsp's own parse would.

use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Value};

/// The JSON-RPC error code of a body that is not JSON.
pub const PARSE_ERROR: i64 = -32700;

/// The JSON-RPC error code of JSON that is not a request, notification or response.
pub const INVALID_REQUEST: i64 = -32600;

/// What to do with one well-framed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A JSON-RPC message tower-lsp decodes: forward this body (the one that came,
    /// or its normalised form).
    Forward(Vec<u8>),
    /// Not one: send this error response (a JSON body) to the client.
    Answer(Vec<u8>),
}

/// Judges one body: forward it to tower-lsp, or answer it with a JSON-RPC error.
pub fn judge(body: Vec<u8>) -> Verdict {
    let shape = match serde_json::from_slice::<Shape>(&body) {
        Ok(shape) => shape,
        Err(error) => {
            let (code, what) = if error.is_data() {
                (INVALID_REQUEST, "a JSON-RPC message")
            } else {
                (PARSE_ERROR, "JSON")
            };
            return Verdict::Answer(error_response(
                &Value::Null,
                code,
                format!("the body is not {what}: {error}"),
            ));
        }
    };
    let members = match shape {
        Shape::NotObject(kind) => {
            return Verdict::Answer(error_response(
                &Value::Null,
                INVALID_REQUEST,
                format!("a message is a JSON object, not {kind}"),
            ))
        }
        Shape::Object(members) => members,
    };
    let id = members.id.as_ref().and_then(Summary::as_id);
    let echoed = id.clone().unwrap_or(Value::Null);
    let invalid = |reason: &str| Verdict::Answer(error_response(&echoed, INVALID_REQUEST, reason));
    if let Some(name) = members.twice {
        return invalid(&format!("the member \"{name}\" appears twice"));
    }
    if !matches!(&members.jsonrpc, Some(Summary::Text(version)) if version == "2.0") {
        return invalid(r#"the message lacks "jsonrpc": "2.0""#);
    }
    if members.id.is_some() && id.is_none() {
        return invalid(r#""id" is not an integer, a string or null"#);
    }
    let answers = members.result || members.error.is_some();
    match (&members.method, answers) {
        (Some(Summary::Text(method)), false) => {
            let empty = matches!(
                members.params,
                Some(Summary::Null | Summary::Object { empty: true })
            );
            if empty && (method == "shutdown" || method == "exit") {
                let mut message = json!({ "jsonrpc": "2.0", "method": method });
                if let (Some(id), Some(object)) = (id, message.as_object_mut()) {
                    object.insert("id".to_owned(), id);
                }
                return Verdict::Forward(message.to_string().into_bytes());
            }
            Verdict::Forward(body)
        }
        (Some(_), false) => invalid(r#""method" is not a string"#),
        (Some(_), true) => invalid(r#"the message has both a "method" and a "result" or "error""#),
        (None, false) => {
            invalid(r#"the message has neither a string "method" nor a "result" or "error""#)
        }
        (None, true) => {
            if members.id.is_none() {
                invalid(r#"a response has no "id""#)
            } else if members.result && members.error.is_some() {
                invalid(r#"a response has both "result" and "error""#)
            } else if members.error == Some(false) {
                invalid(r#""error" is not an object with an integer "code" and a string "message""#)
            } else {
                Verdict::Forward(body)
            }
        }
    }
}

/// A JSON-RPC error response (a JSON body) with the standard message of `code`
/// and `reason` as its data.
fn error_response(id: &Value, code: i64, reason: impl Into<String>) -> Vec<u8> {
    let message = if code == PARSE_ERROR {
        "Parse error"
    } else {
        "Invalid request"
    };
    json!({
        "jsonrpc": "2.0",
        "error": { "code": code, "message": message, "data": reason.into() },
        "id": id,
    })
    .to_string()
    .into_bytes()
}

/// A body's top level, read without building its values.
enum Shape {
    /// Not an object: "an array", "a number", ...
    NotObject(&'static str),
    /// An object and the members that matter here.
    Object(Members),
}

/// The members of a message object that decide whether tower-lsp decodes it.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Summary>,
    method: Option<Summary>,
    id: Option<Summary>,
    params: Option<Summary>,
    result: bool,
    /// Some(whether it is an object with an integer `code` and a string `message`).
    error: Option<bool>,
    /// A member given twice (tower-lsp refuses the whole message).
    twice: Option<&'static str>,
}

/// One JSON value, its contents skipped (but checked as tower-lsp would parse them).
#[derive(Debug, PartialEq)]
enum Summary {
    Null,
    Bool,
    /// An integer that fits an i64.
    Int(i64),
    /// An integer over i64::MAX, or a number with a fraction or exponent.
    OtherNumber,
    Text(String),
    Array,
    Object {
        empty: bool,
    },
}

impl Summary {
    /// The JSON-RPC id this value is (tower-lsp's `Id`: an i64, a string or null).
    fn as_id(&self) -> Option<Value> {
        match self {
            Summary::Null => Some(Value::Null),
            Summary::Int(n) => Some(json!(n)),
            Summary::Text(text) => Some(json!(text)),
            _ => None,
        }
    }
}

/// A value skipped as it is read. Unlike [`serde::de::IgnoredAny`], strings and numbers are
/// parsed in full (serde_json's `IgnoredAny` accepts a lone surrogate escape or an
/// out-of-range number, which tower-lsp's own parse refuses).
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_none<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Skip, D::Error> {
        Skip::deserialize(deserializer)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SummaryVisitor)
    }
}

struct SummaryVisitor;

impl<'de> Visitor<'de> for SummaryVisitor {
    type Value = Summary;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Summary, E> {
        Ok(Summary::Bool)
    }
    fn visit_i64<E>(self, n: i64) -> Result<Summary, E> {
        Ok(Summary::Int(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Summary, E> {
        Ok(i64::try_from(n).map_or(Summary::OtherNumber, Summary::Int))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Summary, E> {
        Ok(Summary::OtherNumber)
    }
    fn visit_str<E>(self, text: &str) -> Result<Summary, E> {
        Ok(Summary::Text(text.to_owned()))
    }
    fn visit_unit<E>(self) -> Result<Summary, E> {
        Ok(Summary::Null)
    }
    fn visit_none<E>(self) -> Result<Summary, E> {
        Ok(Summary::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Summary, D::Error> {
        Summary::deserialize(deserializer)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Summary, A::Error> {
        SkipVisitor.visit_seq(seq)?;
        Ok(Summary::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Summary, A::Error> {
        let mut empty = true;
        while map.next_key::<Skip>()?.is_some() {
            empty = false;
            map.next_value::<Skip>()?;
        }
        Ok(Summary::Object { empty })
    }
}

/// A member name of a message object.
enum Key {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Key, E> {
        Ok(match name {
            "jsonrpc" => Key::Jsonrpc,
            "method" => Key::Method,
            "id" => Key::Id,
            "params" => Key::Params,
            "result" => Key::Result,
            "error" => Key::Error,
            _ => Key::Other,
        })
    }
}

/// Whether an `error` member is `{code: integer, message: string, data?}` (once each).
struct ErrorShape(bool);

impl<'de> Deserialize<'de> for ErrorShape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ErrorVisitor).map(ErrorShape)
    }
}

struct ErrorVisitor;

impl<'de> Visitor<'de> for ErrorVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an error object")
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        SkipVisitor.visit_seq(seq)?;
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let (mut code, mut message, mut data, mut twice) = (None, None, false, false);
        while let Some(name) = map.next_key::<ErrorKey>()? {
            match name {
                ErrorKey::Code => {
                    twice |= code.is_some();
                    code = Some(map.next_value::<Summary>()?);
                }
                ErrorKey::Message => {
                    twice |= message.is_some();
                    message = Some(map.next_value::<Summary>()?);
                }
                ErrorKey::Data => {
                    twice |= data;
                    data = true;
                    map.next_value::<Skip>()?;
                }
                ErrorKey::Other => {
                    map.next_value::<Skip>()?;
                }
            }
        }
        Ok(!twice
            && matches!(code, Some(Summary::Int(_)))
            && matches!(message, Some(Summary::Text(_))))
    }
}

/// A member name of an error object.
enum ErrorKey {
    Code,
    Message,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for ErrorKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(ErrorKeyVisitor)
    }
}

struct ErrorKeyVisitor;

impl<'de> Visitor<'de> for ErrorKeyVisitor {
    type Value = ErrorKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<ErrorKey, E> {
        Ok(match name {
            "code" => ErrorKey::Code,
            "message" => ErrorKey::Message,
            "data" => ErrorKey::Data,
            _ => ErrorKey::Other,
        })
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::NotObject("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::NotObject("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::NotObject("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::NotObject("a number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::NotObject("a string"))
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::NotObject("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Shape, A::Error> {
        SkipVisitor.visit_seq(seq)?;
        Ok(Shape::NotObject("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut members = Members::default();
        while let Some(key) = map.next_key::<Key>()? {
            let (name, seen) = match key {
                Key::Jsonrpc => ("jsonrpc", members.jsonrpc.is_some()),
                Key::Method => ("method", members.method.is_some()),
                Key::Id => ("id", members.id.is_some()),
                Key::Params => ("params", members.params.is_some()),
                Key::Result => ("result", members.result),
                Key::Error => ("error", members.error.is_some()),
                Key::Other => {
                    map.next_value::<Skip>()?;
                    continue;
                }
            };
            if seen && members.twice.is_none() {
                members.twice = Some(name);
            }
            match key {
                Key::Jsonrpc => members.jsonrpc = Some(map.next_value()?),
                Key::Method => members.method = Some(map.next_value()?),
                Key::Id => members.id = Some(map.next_value()?),
                Key::Params => members.params = Some(map.next_value()?),
                Key::Result => {
                    map.next_value::<Skip>()?;
                    members.result = true;
                }
                Key::Error => {
                    let ErrorShape(well_formed) = map.next_value()?;
                    members.error = Some(well_formed);
                }
                Key::Other => {}
            }
        }
        Ok(Shape::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(body: &str) -> Verdict {
        judge(body.as_bytes().to_vec())
    }

    fn answer(id: Value, code: i64, reason: &str) -> Verdict {
        Verdict::Answer(error_response(&id, code, reason))
    }

    #[test]
    fn messages_are_forwarded_as_they_came() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"initialized","params":{},"extra":[1,{"a":"\u00e9"}]}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":[null]}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m","data":{}}}"#,
            r#" {"jsonrpc":"2.0","method":"x","id":-9223372036854775808} "#,
        ] {
            assert_eq!(verdict(body), Verdict::Forward(body.as_bytes().to_vec()));
        }
    }

    #[test]
    fn shutdown_and_exit_lose_empty_params_only() {
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","id":4,"method":"shutdown","params":null}"#),
            Verdict::Forward(br#"{"id":4,"jsonrpc":"2.0","method":"shutdown"}"#.to_vec())
        );
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","method":"exit","params":{}}"#),
            Verdict::Forward(br#"{"jsonrpc":"2.0","method":"exit"}"#.to_vec())
        );
        let kept = r#"{"jsonrpc":"2.0","method":"exit","params":{"a":1}}"#;
        assert_eq!(verdict(kept), Verdict::Forward(kept.as_bytes().to_vec()));
    }

    #[test]
    fn what_the_language_server_library_would_choke_on_is_answered() {
        let lone = r#"{"jsonrpc":"2.0","method":"x","params":"\ud800"}"#;
        assert!(matches!(verdict(lone), Verdict::Answer(_)));
        let huge = r#"{"jsonrpc":"2.0","method":"x","params":[1e400]}"#;
        assert!(matches!(verdict(huge), Verdict::Answer(_)));
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#),
            answer(
                Value::Null,
                INVALID_REQUEST,
                r#""id" is not an integer, a string or null"#
            )
        );
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":3,"method":"x"}"#),
            answer(
                json!(3),
                INVALID_REQUEST,
                r#"the member "jsonrpc" appears twice"#
            )
        );
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","id":3,"error":{"code":"x","message":"m"}}"#),
            answer(
                json!(3),
                INVALID_REQUEST,
                r#""error" is not an object with an integer "code" and a string "message""#
            )
        );
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","result":1}"#),
            answer(Value::Null, INVALID_REQUEST, r#"a response has no "id""#)
        );
        assert_eq!(
            verdict(r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#),
            answer(
                json!(1),
                INVALID_REQUEST,
                r#"the message has both a "method" and a "result" or "error""#
            )
        );
        assert_eq!(
            verdict("{} x"),
            answer(
                Value::Null,
                PARSE_ERROR,
                "the body is not JSON: trailing characters at line 1 column 4"
            )
        );
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(verdict(&deep), Verdict::Answer(_)));
    }
}
