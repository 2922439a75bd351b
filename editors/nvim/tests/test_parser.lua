-- The tree-sitter grammar in Neovim: the plugin's query copies are identical
-- to grammar/queries, a prompt falls back to Markdown without the parser,
-- :PromptForgeInstallParser compiles it, and prompts are then highlighted with
-- its queries (and the Lua injection).
local H = require('helpers')
local parser = require('promptforge.parser')

local function read(path)
  local file = assert(io.open(path, 'rb'))
  local text = file:read('*a')
  file:close()
  return text
end

local function captures(buf, row, col)
  vim.treesitter.highlighter.active[buf].tree:parse(true) -- with the injected trees
  return vim.tbl_map(function(c) return c.capture end, vim.treesitter.get_captures_at_pos(buf, row, col))
end

H.setup()
local stats = H.repo .. '/examples/word-stats.md'

H.run('parser', {
  { 'queries/promptforge/*.scm are identical to grammar/queries', function()
    for _, name in ipairs({ 'highlights.scm', 'injections.scm', 'folds.scm' }) do
      local copy = H.plugin .. '/queries/promptforge/' .. name
      local source = H.repo .. '/grammar/queries/' .. name
      assert(read(copy) == read(source), copy .. ' differs from ' .. source .. ': copy it again')
    end
  end },

  { 'without the parser a prompt keeps Markdown highlighting', function()
    os.remove(parser.path()) -- only this plugin's own build output
    assert(not parser.available(), 'a promptforge parser is still on runtimepath')
    local buf = H.open(stats)
    H.eq('markdown', vim.bo[buf].filetype, 'filetype')
    H.eq(nil, vim.treesitter.highlighter.active[buf], 'tree-sitter highlighter')
    H.eq('markdown', vim.b[buf].current_syntax, 'syntax')
  end },

  { ':PromptForgeInstallParser compiles grammar/src and the prompt is highlighted', function()
    local buf = vim.fn.bufnr(stats)
    vim.cmd('PromptForgeInstallParser')
    assert(vim.uv.fs_stat(parser.path()), 'no ' .. parser.path())
    assert(parser.available(), 'the parser does not load')
    local highlighter = H.wait('the highlighter', function() return vim.treesitter.highlighter.active[buf] end)
    H.eq('promptforge', highlighter.tree:lang(), 'language')
    local h1 = H.line_of(buf, '^# Word stats')
    assert(vim.tbl_contains(captures(buf, h1, 0), 'punctuation.special'), vim.inspect(captures(buf, h1, 0)))
    assert(vim.tbl_contains(captures(buf, h1, 3), 'markup.heading.1'), vim.inspect(captures(buf, h1, 3)))
    local info = H.line_of(buf, '^```lua shared')
    assert(vim.tbl_contains(captures(buf, info, 4), 'label'), vim.inspect(captures(buf, info, 4)))
    -- Lua fences get Lua's own highlights through injections.scm.
    local lua = H.line_of(buf, '^  local list = {}')
    assert(vim.tbl_contains(captures(buf, lua, 2), 'keyword'), vim.inspect(captures(buf, lua, 2)))
  end },

  { 'a prompt opened after the install is highlighted at once', function()
    local dir = H.scratch({ ['p.md'] = H.prompt("return 'x'") })
    local buf = H.open(dir .. '/p.md')
    H.eq('promptforge', vim.treesitter.highlighter.active[buf].tree:lang(), 'language')
  end },
})
