//! The check of a model's tool-call arguments against the tool's schema before the
//! call runs (`language.md` §4): a JSON object, every required property present,
//! and each top-level property of its declared JSON type. Nested values and other
//! schema keywords are left to the tool.

use serde_json::Value as Json;

use crate::messages;

/// The JSON type of a value as a reason names it.
fn json_type(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// True when `value` has the JSON Schema type `expected`.
fn has_type(value: &Json, expected: &str) -> bool {
    match expected {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => match value {
            Json::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        // A type this check does not know is left to the tool.
        _ => true,
    }
}

/// Parses a model's arguments text and checks it against `schema`; an empty text is
/// the empty object (models send it for tools without arguments). The error is the
/// reason of `invalid arguments for tool "{alias}": {reason}`.
pub fn check_arguments(schema: &Json, text: &str) -> Result<Json, String> {
    let value: Json = if text.trim().is_empty() {
        Json::Object(Default::default())
    } else {
        serde_json::from_str(text).map_err(|_| messages::ARGUMENTS_NOT_JSON.to_owned())?
    };
    let Json::Object(arguments) = &value else {
        return Err(messages::arguments_not_object(json_type(&value)));
    };
    if let Some(required) = schema.get("required").and_then(Json::as_array) {
        for name in required.iter().filter_map(Json::as_str) {
            if !arguments.contains_key(name) {
                return Err(messages::missing_property(name));
            }
        }
    }
    let properties = schema.get("properties").and_then(Json::as_object);
    for (name, given) in arguments {
        let Some(declared) = properties.and_then(|p| p.get(name)) else {
            continue;
        };
        let expected: Vec<&str> = match declared.get("type") {
            Some(Json::String(t)) => vec![t.as_str()],
            Some(Json::Array(types)) => types.iter().filter_map(Json::as_str).collect(),
            _ => continue,
        };
        if !expected.is_empty() && !expected.iter().any(|t| has_type(given, t)) {
            return Err(messages::wrong_property_type(
                name,
                &expected.join(" or "),
                json_type(given),
            ));
        }
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Json {
        json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}, "n": {"type": ["number", "null"]}}, "required": ["limit", "query"]})
    }

    #[test]
    fn valid_arguments_pass() {
        let value = check_arguments(&schema(), r#"{"query": "x", "limit": 3.0}"#).unwrap();
        assert_eq!(value["query"], "x");
        assert_eq!(
            check_arguments(&json!({"type": "object"}), "  ").unwrap(),
            json!({})
        );
    }

    #[test]
    fn every_reason() {
        let cases = [
            ("not json", "the arguments are not valid JSON"),
            ("[1]", "the arguments must be a JSON object, got array"),
            ("\"x\"", "the arguments must be a JSON object, got string"),
            (r#"{"query": "x"}"#, "missing required property \"limit\""),
            (
                r#"{"query": 1, "limit": 2}"#,
                "property \"query\" must be of type string, got integer",
            ),
            (
                r#"{"query": "q", "limit": 2.5}"#,
                "property \"limit\" must be of type integer, got number",
            ),
            (
                r#"{"query": "q", "limit": 2, "n": "x"}"#,
                "property \"n\" must be of type number or null, got string",
            ),
        ];
        for (text, reason) in cases {
            assert_eq!(
                check_arguments(&schema(), text).unwrap_err(),
                reason,
                "{text}"
            );
        }
    }
}
