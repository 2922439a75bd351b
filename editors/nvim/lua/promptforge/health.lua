-- :checkhealth promptforge
local M = {}

-- The server command in use: vim.lsp.config's (Neovim 0.11+) or setup()'s.
local function server_cmd()
  local lsp_config = vim.fn.has('nvim-0.11') == 1 and vim.lsp.config.promptforge
  if lsp_config and type(lsp_config.cmd) == 'table' and not require('promptforge.config').setup_called then
    return lsp_config.cmd
  end
  return require('promptforge.config').options.cmd
end

function M.check()
  local health = vim.health
  health.start('PromptForge')

  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.10 or later is needed')
  end

  -- The binary and its version.
  local cmd = server_cmd()
  local exe = type(cmd) == 'table' and vim.fn.exepath(cmd[1]) or ''
  if exe == '' then
    health.error(('server binary `%s` not found'):format(type(cmd) == 'table' and cmd[1] or vim.inspect(cmd)),
      { 'Put promptforge on PATH or set `cmd` in setup()' })
  else
    local result = vim.system({ exe, '--version' }, { text = true }):wait(10000)
    if result.code == 0 then
      health.ok(('server binary %s: %s'):format(exe, vim.trim(result.stdout)))
    else
      health.error(('`%s --version` failed: %s'):format(exe, result.stderr or result.code))
    end
  end

  -- The running servers.
  local clients = vim.lsp.get_clients({ name = 'promptforge' })
  if #clients == 0 then
    health.info('no promptforge server is running (open a prompt or a *.test.yaml file)')
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_keys(client.attached_buffers or {})
    health.ok(('server %d attached to %d buffer(s), root %s'):format(client.id, #buffers, client.root_dir or '(none)'))
  end

  -- The tree-sitter parser and its queries.
  local parser = require('promptforge.parser')
  if parser.available() then
    health.ok('tree-sitter parser promptforge installed')
  else
    health.warn('tree-sitter parser promptforge not installed: prompts use Markdown highlighting',
      { 'Run :PromptForgeInstallParser (needs a C compiler)' })
  end
  if #vim.api.nvim_get_runtime_file('queries/promptforge/highlights.scm', true) > 0 then
    health.ok('queries/promptforge/highlights.scm on runtimepath')
  else
    health.warn('queries/promptforge/highlights.scm not found on runtimepath')
  end
end

return M
