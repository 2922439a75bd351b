//! A small line diff (longest common subsequence) for readable test failures.

/// Renders the differences between `expected` and `actual` line by line:
/// `  ` for a line in both, `- ` for a line only expected, `+ ` for a line only
/// produced. Control characters other than tab are shown escaped.
pub fn render(expected: &str, actual: &str) -> String {
    let exp: Vec<&str> = expected.lines().collect();
    let act: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of exp[i..] and act[j..].
    let mut lcs = vec![vec![0usize; act.len() + 1]; exp.len() + 1];
    for i in (0..exp.len()).rev() {
        for j in (0..act.len()).rev() {
            lcs[i][j] = if exp[i] == act[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < exp.len() || j < act.len() {
        if i < exp.len() && j < act.len() && exp[i] == act[j] {
            out.push_str(&format!("  {}\n", show(exp[i])));
            i += 1;
            j += 1;
        } else if i < exp.len() && (j == act.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("- {}\n", show(exp[i])));
            i += 1;
        } else {
            out.push_str(&format!("+ {}\n", show(act[j])));
            j += 1;
        }
    }
    out
}

fn show(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn marks_missing_and_extra_lines() {
        assert_eq!(render("a\nb\nc\n", "a\nc\nd\n"), "  a\n- b\n  c\n+ d\n");
    }

    #[test]
    fn equal_texts_have_no_marks() {
        assert_eq!(render("x\n", "x\n"), "  x\n");
    }
}
