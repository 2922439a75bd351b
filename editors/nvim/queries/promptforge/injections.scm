; Languages embedded in PromptForge prompt files.

; The frontmatter is YAML.
((frontmatter_content) @injection.content
  (#set! injection.language "yaml"))

; The executable blocks: a fence whose info string is exactly `lua` or
; `lua shared`.
((fenced_code_block
  (fence_open
    info: (info_string) @_info)
  (code_content) @injection.content)
  (#any-of? @_info "lua" "lua shared")
  (#set! injection.language "lua"))

; Any other fence whose info string is a single word: that word names the
; language (`python`, `json`, ...). Fences with several words in their info
; string (other than `lua shared`) get no injection.
((fenced_code_block
  (fence_open
    info: (info_string) @injection.language)
  (code_content) @injection.content)
  (#not-any-of? @injection.language "lua" "lua shared")
  (#match? @injection.language "^[^ \t]+$"))

; Prose and heading text are Markdown inline content.
((paragraph) @injection.content
  (#set! injection.language "markdown_inline"))

((heading_content) @injection.content
  (#set! injection.language "markdown_inline"))
