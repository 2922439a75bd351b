-- The early prompt check (detect.lua, through config.kind) against the shared
-- corpus tests/detection: each file opened in a buffer as Neovim reads it
-- (BOM, CRLF detected); every file the server takes for a prompt is one here,
-- and of the others those index.txt marks editors:prompt. No server is started.
local H = require('helpers')
local config = require('promptforge.config')

local corpus = H.repo .. '/tests/detection'

-- The index: { file = name, prompt = boolean (the server's answer), editors =
-- boolean (the editors' answer: `prompt`, or `not-a-prompt editors:prompt`) } in order.
local function index()
  local entries = {}
  for _, line in ipairs(vim.fn.readfile(corpus .. '/index.txt')) do
    if line:match('%S') and not line:match('^#') then
      local file, answer, editors = line:match('^(%S+)%s+(%S+)%s*(%S*)')
      assert(answer == 'prompt' or answer == 'not-a-prompt', line)
      table.insert(entries, { file = file, prompt = answer == 'prompt',
        editors = answer == 'prompt' or editors == 'editors:prompt' })
    end
  end
  return entries
end

-- config.kind of `file` opened in a fresh buffer.
local function kind_of(file)
  vim.cmd('silent edit ' .. vim.fn.fnameescape(corpus .. '/' .. file))
  local buf = vim.api.nvim_get_current_buf()
  local kind = config.kind(buf)
  vim.cmd('silent bwipeout! ' .. buf)
  return kind
end

H.run('detect', {
  { 'the shared corpus: every prompt is one here, and of the others those marked editors:prompt', function()
    local entries = index()
    assert(#entries >= 50, #entries .. ' entries')
    local wrong = {}
    for _, entry in ipairs(entries) do
      local said = kind_of(entry.file) == 'prompt'
      if entry.prompt and not said then
        table.insert(wrong, entry.file .. ': the server takes it for a prompt, this check does not')
      elseif said ~= entry.editors then
        table.insert(wrong, entry.file .. (said and ': called a prompt, not marked editors:prompt'
          or ': marked editors:prompt, rejected'))
      end
    end
    H.eq({}, wrong, 'disagreements with the corpus')
  end },

  { 'a long frontmatter is read a chunk at a time to its key', function()
    local buf = vim.api.nvim_create_buf(true, false)
    vim.api.nvim_buf_set_name(buf, vim.fn.tempname() .. '.md')
    local lines = { '\239\187\191---' }
    for i = 1, 3 * require('promptforge.detect').CHUNK do
      table.insert(lines, ('note_%d: x'):format(i))
    end
    vim.list_extend(lines, { 'promptforge: 0', '---', '# T' })
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    H.eq('prompt', config.kind(buf), 'a BOM in the first line and the key past three chunks')
    vim.api.nvim_buf_set_lines(buf, #lines - 3, #lines - 2, false, { '...' })
    H.eq(nil, config.kind(buf), 'the key gone')
  end },
})
