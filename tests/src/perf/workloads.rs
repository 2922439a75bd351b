//! The inputs of the benchmark table, generated so that every run measures the
//! same text: prompts of a given number of lines or bytes, a folder of small
//! prompts, and a test file of many cases.

/// The frontmatter every generated prompt starts with (9 lines, then the H1).
const HEAD: &str = "---\nname: big\ndescription: A generated prompt\npromptforge: 0\nplugins: [promptforge/web]\ntools:\n  fetch: promptforge/web/fetch\nmodels:\n  writer: {}\n---\n\n# Big\n\n";

/// One section of ten lines: a heading, prose and a Lua block that calls a tool,
/// picks a model label and jumps to its own heading.
fn section(i: usize) -> String {
    format!("## Section {i}\n\nProse of section {i}.\n\n```lua\nlocal page = tools.call('fetch', {{ url = args }})\nmodels.use('writer')\nif page == '' then jump('## Section {i}') end\n```\n\n")
}

/// A prompt of about `lines` lines: the frontmatter and H1, then ten-line sections.
pub fn prompt_of_lines(lines: usize) -> String {
    let mut text = String::from(HEAD);
    let mut count = HEAD.lines().count();
    let mut i = 0;
    while count + 10 <= lines {
        text.push_str(&section(i));
        count += 10;
        i += 1;
    }
    text
}

/// A prompt of at least `bytes` bytes, built of the same sections.
pub fn prompt_of_bytes(bytes: usize) -> String {
    let mut text = String::from(HEAD);
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&section(i));
        i += 1;
    }
    text
}

/// The line (0-based) of a Lua block's first statement near the middle of a
/// [`prompt_of_lines`] prompt of `lines` lines, where the keystrokes go.
pub fn middle_block_line(lines: usize) -> u32 {
    let sections = (lines - HEAD.lines().count()) / 10;
    (HEAD.lines().count() + 10 * (sections / 2) + 5) as u32
}

/// A small pure-Lua prompt: a shared function, a walk of two sections and a
/// fanout (what `run` measures, and what the folder of small prompts holds).
pub const SMALL_PROMPT: &str = r#"---
name: words
description: Counts the words of the argument in pure Lua
promptforge: 0
---

# Words

```lua shared
function words(text)
  local list = {}
  for word in string.gmatch(text, '%S+') do list[#list + 1] = word end
  return list
end
```

```lua
var.words = words(args)
```

## Measure

```lua
local lengths = fanout('### Length', var.words)
local total = 0
for _, n in ipairs(lengths) do total = total + tonumber(n) end
return #var.words .. ' words, ' .. total .. ' letters'
```

### Length

---

```lua
return #item
```
"#;

/// The answer [`SMALL_PROMPT`] gives for `the quick brown fox`.
pub const SMALL_PROMPT_ANSWER: &str = "4 words, 16 letters";

/// A test file of `cases` cases for [`SMALL_PROMPT`] saved as `words.md`.
pub fn small_prompt_tests(cases: usize) -> String {
    let mut text = String::from("cases:\n");
    for i in 0..cases {
        text.push_str(&format!(
            "  - name: case {i}\n    args: \"the quick brown fox\"\n    expect:\n      result: \"{SMALL_PROMPT_ANSWER}\"\n"
        ));
    }
    text
}
