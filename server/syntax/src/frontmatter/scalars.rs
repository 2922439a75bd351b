//! The scalar values of the frontmatter's keys: a string or an integer, or the
//! type error that says what was expected.

use super::messages::{EXPECTED_INTEGER, EXPECTED_STRING};
use super::values::{resolve, Value};
use super::yaml::Node;
use super::Cx;

/// A string value, or a type error (`expected a string`).
pub(crate) fn string<'n>(cx: &mut Cx<'_>, node: &'n Node) -> Option<&'n str> {
    match resolve(node) {
        Value::Str(s) => Some(s),
        _ => {
            cx.type_error(node, EXPECTED_STRING);
            None
        }
    }
}

/// An integer value, or a type error (`expected an integer`).
pub(crate) fn integer(cx: &mut Cx<'_>, node: &Node) -> Option<i128> {
    match resolve(node) {
        Value::Int(n) => Some(n),
        _ => {
            cx.type_error(node, EXPECTED_INTEGER);
            None
        }
    }
}
