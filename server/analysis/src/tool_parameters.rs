//! A tool's JSON Schema parameters as readable lines, for `promptforge catalog`
//! and the editor's hovers ([`crate::ide::hover`]): `name: type (required) - description`.

use serde_json::Value;

/// One line per property of a JSON Schema object, by property name:
/// `url: string (required) - The page to fetch`. A schema without properties
/// gives no line; a schema that is not an object gives one line saying so.
pub fn parameter_lines(schema: &Value) -> Vec<String> {
    let Some(object) = schema.as_object() else {
        return vec!["(the parameter schema is not a JSON object)".to_owned()];
    };
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = object.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let mut line = format!("{name}: {}", type_text(property));
            if required.contains(&name.as_str()) {
                line.push_str(" (required)");
            }
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                line.push_str(" - ");
                line.push_str(description);
            }
            line
        })
        .collect()
}

/// The type of one property: its `type` (joined with `|` when a list), an enum's
/// values, an array's item type, with bounds when present.
fn type_text(property: &Value) -> String {
    let mut text = match property.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".to_owned(),
    };
    if text == "array" {
        if let Some(items) = property.get("items") {
            text = format!("array of {}", type_text(items));
        }
    }
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        text = format!("{text} one of {}", values.join(", "));
    }
    let bound = |key: &str| property.get(key).map(Value::to_string);
    match (bound("minimum"), bound("maximum")) {
        (Some(min), Some(max)) => text.push_str(&format!(" {min}..{max}")),
        (Some(min), None) => text.push_str(&format!(" >= {min}")),
        (None, Some(max)) => text.push_str(&format!(" <= {max}")),
        (None, None) => {}
    }
    if let Some(max) = bound("maxItems") {
        text.push_str(&format!(" (at most {max})"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn properties_read_as_lines() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What to search for" },
                "count": { "type": "integer", "minimum": 1, "maximum": 20 },
                "freshness": { "type": "string", "enum": ["pd", "pw"] },
                "domains": { "type": "array", "items": { "type": "string" }, "maxItems": 20 }
            },
            "required": ["query"]
        });
        assert_eq!(
            parameter_lines(&schema),
            [
                "count: integer 1..20",
                "domains: array of string (at most 20)",
                "freshness: string one of \"pd\", \"pw\"",
                "query: string (required) - What to search for",
            ]
        );
        assert!(parameter_lines(&json!({"type": "object"})).is_empty());
        assert_eq!(
            parameter_lines(&json!([1])),
            ["(the parameter schema is not a JSON object)"]
        );
    }
}
