//! Where the cursor is inside Lua code, read from the text before it (which may
//! not parse yet while the author types): inside the string argument of an API
//! call, after `table.`, or inside a call's parentheses.

use super::cursor::{is_ident, token_start};

/// The cursor inside the first string argument of a call (or a string element of
/// `tools.add({...})`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringArg<'a> {
    /// The function called, such as `tools.call` or `jump`.
    pub callee: &'a str,
    /// Byte offset (in the text) where the string's value starts.
    pub value_start: usize,
}

/// The dotted name that ends `text` (`tools.call` in `x = tools.call`), when it is
/// not itself the member of a longer expression (`a.jump` is not `jump`).
fn trailing_name(text: &str) -> Option<&str> {
    let name = text.get(token_start(text, text.len(), |c| is_ident(c) || c == '.')?..)?;
    (!name.is_empty() && !name.starts_with('.') && !name.ends_with('.')).then_some(name)
}

/// The string argument the cursor at `offset` is in, reading `text` from `from`
/// (the start of the Lua code) to `offset`.
pub fn string_arg(text: &str, from: usize, offset: usize) -> Option<StringArg<'_>> {
    let prefix = text.get(from..offset)?;
    let quote = prefix.rfind(['\'', '"'])?;
    let value = prefix.get(quote + 1..)?;
    if !value
        .chars()
        .all(|c| c != '\n' && c != '\r' && c != '\'' && c != '"')
    {
        return None;
    }
    let before = prefix.get(..quote)?.trim_end();
    let open = before.rfind('(')?;
    let between = before.get(open + 1..)?;
    // Directly `f('`, or inside `tools.add({'a', '`.
    let direct = between.trim().is_empty();
    let in_table = between.trim_start().starts_with('{')
        && between
            .chars()
            .all(|c| is_ident(c) || matches!(c, '{' | ',' | '\'' | '"' | ' ' | '\t' | '-'));
    if !direct && !in_table {
        return None;
    }
    if in_table && quotes_open(between) {
        return None;
    }
    let callee = trailing_name(before.get(..open)?.trim_end())?;
    if in_table && callee != "tools.add" {
        return None;
    }
    Some(StringArg {
        callee,
        value_start: from + quote + 1,
    })
}

/// True when `text` has an unclosed quote.
fn quotes_open(text: &str) -> bool {
    let mut open: Option<char> = None;
    for c in text.chars() {
        match open {
            None if c == '\'' || c == '"' => open = Some(c),
            Some(q) if c == q => open = None,
            _ => {}
        }
    }
    open.is_some()
}

/// `table.` and the member typed so far: `(table, member_start)` when the text
/// before `offset` ends with `tools.ad` or `tools.`.
pub fn member_access(text: &str, from: usize, offset: usize) -> Option<(&str, usize)> {
    let prefix = text.get(from..offset)?;
    let member_start = token_start(prefix, prefix.len(), is_ident)?;
    let member_len = prefix.len() - member_start;
    let head = prefix.get(..member_start)?;
    let head = head.strip_suffix('.')?;
    let table = trailing_name(head)?;
    (!table.contains('.')).then_some((table, offset.saturating_sub(member_len)))
}

/// The innermost call whose parentheses hold the cursor: its callee and the
/// 0-based index of the argument the cursor is in.
pub fn enclosing_call(text: &str, from: usize, offset: usize) -> Option<(&str, u32)> {
    let prefix = text.get(from..offset)?;
    // Open parentheses (byte index, commas seen) outside strings and comments.
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let mut string: Option<char> = None;
    let mut chars = prefix.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some(q) = string {
            if c == '\\' {
                chars.next();
            } else if c == q || c == '\n' {
                string = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => string = Some(c),
            '-' if chars.peek().map(|&(_, n)| n) == Some('-') => {
                for (_, n) in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
            }
            '(' | '{' | '[' => stack.push((i, 0)),
            ')' | '}' | ']' => {
                stack.pop();
            }
            ',' => {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
            _ => {}
        }
    }
    let (open, commas) = *stack
        .iter()
        .rev()
        .find(|(i, _)| prefix.get(*i..*i + 1) == Some("("))?;
    let callee = trailing_name(prefix.get(..open)?.trim_end())?;
    Some((callee, commas))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_arguments_of_api_calls() {
        let text = "x = tools.call('fe";
        let arg = string_arg(text, 0, text.len()).expect("inside the string");
        assert_eq!((arg.callee, arg.value_start), ("tools.call", 16));
        let text = "tools.add({'a', \"b";
        assert_eq!(
            string_arg(text, 0, text.len()).map(|a| a.callee),
            Some("tools.add")
        );
        assert_eq!(
            string_arg("jump( '## A", 0, 11).map(|a| a.callee),
            Some("jump")
        );
        assert_eq!(string_arg("tools.call('a', 'b", 0, 18), None);
        assert_eq!(string_arg("x = 'a", 0, 6), None);
        assert_eq!(string_arg("jump({'a", 0, 8), None);
    }

    #[test]
    fn member_access_after_a_table() {
        assert_eq!(member_access("x = tools.ad", 0, 12), Some(("tools", 10)));
        assert_eq!(member_access("models.", 0, 7), Some(("models", 7)));
        assert_eq!(member_access("a.b.c", 0, 5), None);
        assert_eq!(member_access("tools", 0, 5), None);
    }

    #[test]
    fn enclosing_call_counts_arguments_outside_strings_and_tables() {
        assert_eq!(
            enclosing_call("tools.call('a,b', { x = 1, ", 0, 27),
            Some(("tools.call", 1))
        );
        assert_eq!(enclosing_call("f(g(1), ", 0, 8), Some(("f", 1)));
        assert_eq!(enclosing_call("f(1) -- (\n", 0, 10), None);
        assert_eq!(
            enclosing_call("store.read('p', 1, ", 0, 19),
            Some(("store.read", 2))
        );
    }
}
