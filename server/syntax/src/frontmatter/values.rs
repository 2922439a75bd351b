//! What a node holds, by the YAML 1.2 core schema, and serde's names for it (`{found}`).

use super::yaml::{Kind, Node, Scalar, Style};

/// The core-schema tag prefix (`!!`).
const CORE: &str = "tag:yaml.org,2002:";

/// A node's value as serde would see it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `null`, `~`, or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits `i64` or `u64`.
    Int(i128),
    /// A floating point number.
    Float(f64),
    /// A string.
    Str(&'a str),
    /// A sequence.
    Seq(&'a [Node]),
    /// A map.
    Map(&'a [(Node, Node)]),
}

/// Resolves a node (through an alias).
pub fn resolve(node: &Node) -> Value<'_> {
    match node.kind() {
        Kind::Scalar(scalar) => resolve_scalar(scalar),
        Kind::Seq(items) => Value::Seq(items),
        Kind::Map(pairs) => Value::Map(pairs),
        Kind::Alias(_) => Value::Null,
    }
}

/// Resolves a scalar: quoted and block scalars are strings, `!!str` forces a string, and a
/// plain scalar is null, a boolean, an integer, a float or a string by the core schema.
pub fn resolve_scalar(scalar: &Scalar) -> Value<'_> {
    let text = scalar.value.as_str();
    match scalar.tag.as_deref().and_then(|t| t.strip_prefix(CORE)) {
        Some("str") => return Value::Str(text),
        Some("null" | "bool" | "int" | "float") => return resolve_plain(text),
        _ => {}
    }
    match scalar.style {
        Style::Plain => resolve_plain(text),
        Style::Quoted | Style::Block => Value::Str(text),
    }
}

fn resolve_plain(text: &str) -> Value<'_> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(value) = parse_integer(text) {
        return value;
    }
    parse_float(text).map_or(Value::Str(text), Value::Float)
}

/// `[-+]?[0-9]+`, `[-+]?0o[0-7]+`, `[-+]?0x[0-9a-fA-F]+`; a decimal beyond `i64`/`u64` is a float.
fn parse_integer(text: &str) -> Option<Value<'_>> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    let (digits, radix) = if let Some(hex) = unsigned.strip_prefix("0x") {
        (hex, 16)
    } else if let Some(octal) = unsigned.strip_prefix("0o") {
        (octal, 8)
    } else {
        (unsigned, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok();
    let value = magnitude.and_then(|m| {
        let m = i128::try_from(m).ok()?;
        let v = if negative { -m } else { m };
        (i128::from(i64::MIN)..=i128::from(u64::MAX))
            .contains(&v)
            .then_some(v)
    });
    match value {
        Some(v) => Some(Value::Int(v)),
        None if radix == 10 => text.parse::<f64>().ok().map(Value::Float),
        None => None,
    }
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `[-+]?.inf`, `.nan` (three spellings each).
fn parse_float(text: &str) -> Option<f64> {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let negative = text.starts_with('-');
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (unsigned.get(..at)?, Some(unsigned.get(at + 1..)?)),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match fraction {
        Some(fraction) if whole.is_empty() => !fraction.is_empty() && digits(fraction),
        Some(fraction) => digits(whole) && digits(fraction),
        None => !whole.is_empty() && digits(whole),
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && digits(e)
        }
    };
    if mantissa_ok && exponent_ok {
        text.parse::<f64>().ok()
    } else {
        None
    }
}

/// serde's `{found}` for a node: ``integer `5` ``, `string "x"`, `unit value`, ...
pub fn found(node: &Node) -> String {
    match resolve(node) {
        Value::Null => "unit value".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Int(n) => format!("integer `{n}`"),
        Value::Float(f) => format!("floating point `{}`", float_text(f)),
        Value::Str(s) => format!("string {s:?}"),
        Value::Seq(_) => "sequence".to_owned(),
        Value::Map(_) => "map".to_owned(),
    }
}

/// A float as serde prints it: Rust's `Display`, with `.0` added to a finite integral value.
pub fn float_text(f: f64) -> String {
    let mut text = f.to_string();
    if f.is_finite() && !text.contains('.') {
        text.push_str(".0");
    }
    text
}

/// The text of a key for messages: a scalar's value, or the text of any other node.
pub fn key_text(node: &Node, file: &str) -> String {
    match node.scalar() {
        Some(scalar) => scalar.value.clone(),
        None => file.get(node.range.clone()).unwrap_or("").to_owned(),
    }
}

/// Converts a node into a `serde_yaml::Value` (for `config:`); a key written twice keeps its
/// first value.
pub fn to_serde(node: &Node) -> serde_yaml::Value {
    use serde_yaml::Value as Y;
    match resolve(node) {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(b),
        Value::Int(n) => match (i64::try_from(n), u64::try_from(n)) {
            (Ok(i), _) => Y::Number(i.into()),
            (_, Ok(u)) => Y::Number(u.into()),
            // Unreachable: `Int` always fits one of them.
            _ => Y::Null,
        },
        Value::Float(f) => Y::Number(f.into()),
        Value::Str(s) => Y::String(s.to_owned()),
        Value::Seq(items) => Y::Sequence(items.iter().map(to_serde).collect()),
        Value::Map(pairs) => {
            let mut map = serde_yaml::Mapping::new();
            for (key, value) in pairs {
                let key = to_serde(key);
                if !map.contains_key(&key) {
                    map.insert(key, to_serde(value));
                }
            }
            Y::Mapping(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Value<'_> {
        resolve_plain(text)
    }

    #[test]
    fn core_schema_resolution() {
        assert_eq!(plain(""), Value::Null);
        assert_eq!(plain("~"), Value::Null);
        assert_eq!(plain("NULL"), Value::Null);
        assert_eq!(plain("True"), Value::Bool(true));
        assert_eq!(plain("FALSE"), Value::Bool(false));
        assert_eq!(plain("yes"), Value::Str("yes"));
        assert_eq!(plain("0"), Value::Int(0));
        assert_eq!(plain("-12"), Value::Int(-12));
        assert_eq!(plain("+7"), Value::Int(7));
        assert_eq!(plain("0x1F"), Value::Int(31));
        assert_eq!(plain("0o17"), Value::Int(15));
        assert_eq!(plain("0x"), Value::Str("0x"));
        assert_eq!(plain("0o8"), Value::Str("0o8"));
        assert_eq!(
            plain("18446744073709551615"),
            Value::Int(18_446_744_073_709_551_615)
        );
        assert_eq!(
            plain("18446744073709551616"),
            Value::Float(18_446_744_073_709_551_616.0)
        );
        assert_eq!(plain("1.5"), Value::Float(1.5));
        assert_eq!(plain("1."), Value::Float(1.0));
        assert_eq!(plain(".5"), Value::Float(0.5));
        assert_eq!(plain("1e3"), Value::Float(1000.0));
        assert_eq!(plain("-2.5E-1"), Value::Float(-0.25));
        assert_eq!(plain("-.inf"), Value::Float(f64::NEG_INFINITY));
        assert!(matches!(plain(".NaN"), Value::Float(f) if f.is_nan()));
        for s in [
            ".", "e3", "1e", "1.2.3", "inf", "nan", "-", "+", "1_000", "0b1", "- 1", "-.nan",
        ] {
            assert_eq!(plain(s), Value::Str(s), "{s}");
        }
    }

    #[test]
    fn serde_float_text() {
        assert_eq!(float_text(1.0), "1.0");
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(1000.0), "1000.0");
        assert_eq!(float_text(f64::INFINITY), "inf");
        assert_eq!(float_text(f64::NEG_INFINITY), "-inf");
        assert_eq!(float_text(f64::NAN), "NaN");
    }
}
