; Highlights for the block structure of PromptForge prompt files.
; The frontmatter (YAML), Lua fences and prose (Markdown inline) get their
; inner highlighting from injections.scm.

; ---------------------------------------------------------------- frontmatter

(frontmatter_delimiter) @punctuation.delimiter

; ------------------------------------------------------------------- headings

(atx_marker) @punctuation.special

(heading_content) @markup.heading @title

((atx_heading
  marker: (atx_marker) @_marker
  content: (heading_content) @markup.heading.1)
  (#eq? @_marker "#"))

((atx_heading
  marker: (atx_marker) @_marker
  content: (heading_content) @markup.heading.2)
  (#eq? @_marker "##"))

((atx_heading
  marker: (atx_marker) @_marker
  content: (heading_content) @markup.heading.3)
  (#eq? @_marker "###"))

((atx_heading
  marker: (atx_marker) @_marker
  content: (heading_content) @markup.heading.4)
  (#eq? @_marker "####"))

((atx_heading
  marker: (atx_marker) @_marker
  content: (heading_content) @markup.heading.5)
  (#eq? @_marker "#####"))

((atx_heading
  marker: (atx_marker) @_marker
  content: (heading_content) @markup.heading.6)
  (#eq? @_marker "######"))

; ------------------------------------------------------------- fenced blocks

(fence_marker) @punctuation.delimiter

(fence_close) @punctuation.delimiter

(info_string) @label

(code_content) @markup.raw.block

; ---------------------------------------------------------------------- prose

(thematic_break) @punctuation.special

(paragraph) @spell
