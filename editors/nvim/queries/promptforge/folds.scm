; Foldable regions of PromptForge prompt files.

[
  (frontmatter)
  (fenced_code_block)
] @fold
