-- The tree-sitter grammar (grammar/): compiling its parser into this plugin's
-- parser/promptforge.so, telling nvim-treesitter where it is, and starting it
-- for prompt buffers. The queries are this plugin's queries/promptforge/*.scm
-- (copies of grammar/queries, kept identical by tests/test_parser.lua).
local config = require('promptforge.config')

local M = {}

function M.path()
  return config.plugin_dir() .. '/parser/promptforge.so'
end

-- True when Neovim can load the parser (from any parser/ on 'runtimepath').
function M.available()
  -- language.add errors (0.10) or returns nil (0.11+) when there is none.
  pcall(vim.treesitter.language.add, 'promptforge')
  return (pcall(vim.treesitter.language.inspect, 'promptforge'))
end

-- Compiles grammar/src/parser.c and scanner.c with the C compiler ($CC, else
-- cc, gcc or clang). Returns true, or false and the reason.
function M.install()
  local src = config.grammar_dir() .. '/src'
  local compiler = vim.env.CC
  for _, candidate in ipairs({ 'cc', 'gcc', 'clang' }) do
    if compiler then break end
    if vim.fn.executable(candidate) == 1 then
      compiler = candidate
    end
  end
  if not compiler then
    return false, 'no C compiler found (set $CC or install cc)'
  end
  if vim.fn.filereadable(src .. '/parser.c') == 0 then
    return false, 'no grammar sources at ' .. src .. ' (set grammar_dir in setup())'
  end
  local out = M.path()
  vim.fn.mkdir(vim.fs.dirname(out), 'p')
  -- Build beside the target, then rename: a loaded .so is never overwritten in place.
  local tmp = vim.fs.dirname(out) .. '/promptforge-build.tmp' -- not parser/promptforge.*
  local cmd = { compiler, '-o', tmp, '-shared', '-fPIC', '-O2', '-std=c11', '-I', src,
    src .. '/parser.c', src .. '/scanner.c' }
  local result = vim.system(cmd, { text = true }):wait()
  if result.code ~= 0 then
    return false, table.concat(cmd, ' ') .. ' failed:\n' .. (result.stderr or '')
  end
  local ok, err = os.rename(tmp, out)
  if not ok then
    return false, err
  end
  return true, out
end

-- Registers the grammar with nvim-treesitter, when it is installed, so that
-- its :TSInstall promptforge builds from grammar/ too.
function M.register()
  -- promptforge buffers (a filetype a user may set) use the promptforge parser.
  vim.treesitter.language.register('promptforge', { 'promptforge' })
  local ok, parsers = pcall(require, 'nvim-treesitter.parsers')
  if not ok then
    return
  end
  local info = { url = config.grammar_dir(), path = config.grammar_dir(), files = { 'src/parser.c', 'src/scanner.c' } }
  if type(parsers.get_parser_configs) == 'function' then
    -- nvim-treesitter's `master` branch.
    parsers.get_parser_configs().promptforge = { install_info = info, filetype = 'promptforge' }
  else
    -- The `main` branch: parsers are entries of the module, re-read on TSUpdate.
    local function add()
      require('nvim-treesitter.parsers').promptforge = { install_info = info, tier = 3 }
    end
    add()
    vim.api.nvim_create_autocmd('User', { pattern = 'TSUpdate', callback = add })
  end
end

-- Highlights a prompt buffer with the grammar; without the parser the buffer
-- keeps its Markdown highlighting.
function M.highlight(buf)
  if not M.available() then
    return false
  end
  return (pcall(vim.treesitter.start, buf, 'promptforge'))
end

return M
