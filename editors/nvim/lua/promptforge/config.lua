-- The plugin's options, which buffers are PromptForge documents, and the client
-- configuration shared by `setup()` (vim.lsp.start) and `lsp/promptforge.lua`
-- (Neovim 0.11's vim.lsp.config / vim.lsp.enable).
local M = {}

M.defaults = {
  -- The server command; the binary is looked up on PATH.
  cmd = { 'promptforge', 'lsp' },
  -- Filetypes whose buffers are checked; `is_document` then decides.
  filetypes = { 'markdown', 'yaml', 'promptforge' },
  -- The folder of the nearest of these names is the workspace root (one server per root).
  root_markers = { 'promptforge.toml', '.git' },
  -- Sent in workspace/didChangeConfiguration and answered to workspace/configuration.
  settings = {},
  -- Called after the plugin's own on_attach: function(client, bufnr).
  on_attach = nil,
  -- Extra client capabilities (merged into Neovim's defaults by vim.lsp.start).
  capabilities = nil,
  -- Highlight prompts with the tree-sitter grammar when its parser is installed.
  treesitter = true,
  -- Show $/progress of runs in the echo area.
  progress = true,
  -- Where `:PromptForgeInstallParser` finds the grammar's src/ (default: the
  -- repository's grammar/ two levels above this plugin folder).
  grammar_dir = nil,
  -- Register the debugger with nvim-dap (which must be installed): the adapter
  -- `promptforge` (this binary's `promptforge dap`) and launch configurations
  -- for prompts, offered by dap.continue(). `:PromptForgeDebug` and the Debug
  -- lens work either way when nvim-dap is installed.
  dap = false,
}

M.options = vim.deepcopy(M.defaults)

-- The plugin's folder (editors/nvim): three levels above this file.
function M.plugin_dir()
  local here = debug.getinfo(1, 'S').source:sub(2)
  return vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(here))))
end

function M.grammar_dir()
  return M.options.grammar_dir or vim.fs.normalize(M.plugin_dir() .. '/../../grammar')
end

-- 'prompt', 'test' or nil. A Markdown buffer is a prompt when it is named
-- `*.pf.md`, or its first line is `---` and its frontmatter has a top-level
-- `promptforge:` key (the server makes the final decision and stays silent on
-- other Markdown). `*.test.yaml` files are prompt tests.
function M.kind(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name:match('%.test%.yaml$') then
    return 'test'
  end
  if vim.b[buf].promptforge_kind == 'prompt' or name:match('%.pf%.md$') then
    return 'prompt' -- once a prompt, a prompt until the buffer closes
  end
  local ft = vim.bo[buf].filetype
  if ft ~= 'markdown' and ft ~= 'promptforge' and not name:match('%.md$') then
    return nil
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, 200, false)
  if not lines[1] or not lines[1]:match('^%-%-%-%s*$') then
    return nil
  end
  for i = 2, #lines do
    if lines[i]:match('^%-%-%-%s*$') or lines[i]:match('^%.%.%.%s*$') then
      return nil -- end of the frontmatter without the key
    end
    if lines[i]:match('^promptforge%s*:') then
      return 'prompt'
    end
  end
  return nil
end

-- The server command in use: vim.lsp.config's (Neovim 0.11+, without
-- setup()) or setup()'s.
function M.server_cmd()
  local lsp_config = vim.fn.has('nvim-0.11') == 1 and vim.lsp.config.promptforge
  if lsp_config and type(lsp_config.cmd) == 'table' and not M.setup_called then
    return lsp_config.cmd
  end
  return M.options.cmd
end

-- The workspace root of a buffer: the nearest root marker's folder, else the file's own.
function M.root(buf, markers)
  local name = vim.api.nvim_buf_get_name(buf)
  return vim.fs.root(buf, markers or M.options.root_markers) or vim.fs.dirname(name)
end

-- The client configuration (without root_dir) for these options.
function M.client_config(opts)
  opts = opts or M.options
  local run = require('promptforge.run')
  local trust = require('promptforge.trust')
  return {
    name = 'promptforge',
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_markers = opts.root_markers,
    settings = opts.settings,
    capabilities = opts.capabilities,
    handlers = run.handlers,
    -- initializationOptions.trusted, and one server per root and trust (trust.lua).
    before_init = trust.before_init,
    reuse_client = trust.reuse_client,
    on_attach = function(client, buf)
      require('promptforge').on_attach(client, buf)
      if opts.on_attach then
        opts.on_attach(client, buf)
      end
    end,
  }
end

return M
