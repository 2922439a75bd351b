-- Which Markdown buffers may be prompts: the editor's early decision, made
-- before the server sees the buffer. The server decides
-- (`syntax::prompt_detection::is_prompt`); this decides generously: it never
-- calls a buffer the server takes for a prompt "not a prompt" (the shared
-- corpus tests/detection is what both are tested on, here by
-- tests/test_detect.lua), and may call a few others prompts (the server then
-- stays silent on them). The same rule as the VS Code extension's
-- src/logic/detect.mts.
local M = {}

-- How many lines are read from the buffer at a time; the whole frontmatter is
-- read (as the server reads it), a chunk at a time until its closing line.
M.CHUNK = 200

-- A scan fed one line at a time. feed returns true (a prompt), false (not a
-- prompt) or nil (read on); finish gives the answer at the end of the text.
local Scan = {}
Scan.__index = Scan

local function new_scan()
  return setmetatable({ opened = false, top = nil, other_style = false, word = false }, Scan)
end

function Scan:feed(line)
  if not self.opened then
    -- Blank lines may come before the opening line, which is exactly `---`.
    if line:match('^[ \t]*$') then
      return nil
    end
    if line ~= '---' then
      return false
    end
    self.opened = true
    return nil
  end
  if line == '---' then -- the closing line (`...` is no end: the server reads on)
    return self:finish()
  end
  if line:match('^[ \t]*#') or line:match('^[ \t]*$') then
    return nil -- comments and blank lines hold no key
  end
  self.top = self.top or line:match('^[ \t]*')
  -- A block `promptforge:` key (quoted or not) at the start of a line or
  -- indented as the frontmatter's first line.
  local indent = line:match('^([ \t]*)["\']?promptforge["\']?[ \t]*:')
  if indent == '' or indent == self.top then
    return true
  end
  -- Flow style, an explicit key, a tag or an anchor: then the word suffices.
  self.other_style = self.other_style or line:find('^[ \t]*[{?!&]') ~= nil
  self.word = self.word or line:find('%f[%w_%-]promptforge%f[^%w_%-]') ~= nil
  return nil
end

function Scan:finish()
  return self.opened and self.other_style and self.word
end

-- True when the buffer may be a prompt: after an optional BOM and blank lines
-- its first line is `---`, and its frontmatter (up to the next `---` line, or
-- the end of the buffer) has a `promptforge:` key at the start of a line or
-- indented as its first line, or, when it uses flow style, an explicit key, a
-- tag or an anchor, the word `promptforge` outside a comment. A CR inside a
-- line (a file with CR line ends read as one line) ends a line too.
function M.buffer_is_prompt(buf)
  local scan = new_scan()
  local count = vim.api.nvim_buf_line_count(buf)
  for start = 0, count - 1, M.CHUNK do
    for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, start, start + M.CHUNK, false)) do
      if start == 0 and i == 1 then
        line = line:gsub('^\239\187\191', '')
      end
      for part in (line .. '\r'):gmatch('([^\r]*)\r') do
        local answer = scan:feed(part)
        if answer ~= nil then
          return answer
        end
      end
    end
  end
  return scan:finish()
end

return M
