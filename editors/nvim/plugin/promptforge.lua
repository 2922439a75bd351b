-- The commands, defined at startup so they also work when the client was
-- started by vim.lsp.enable('promptforge') without setup().
if vim.g.loaded_promptforge then
  return
end
vim.g.loaded_promptforge = true

local function run() return require('promptforge.run') end

vim.api.nvim_create_user_command('PromptForgeRun', function(cmd)
  run().run(cmd.args)
end, { nargs = '*', desc = 'Run this prompt (the rest of the line is its argument string)' })

vim.api.nvim_create_user_command('PromptForgeRunOffline', function(cmd)
  run().run_offline(cmd.args)
end, { nargs = '*', desc = 'Run this prompt with every model label answered by echo (the rest of the line is its argument string)' })

vim.api.nvim_create_user_command('PromptForgeTrace', function(cmd)
  require('promptforge.trace').open(cmd.args)
end, {
  nargs = '?',
  complete = function(lead)
    return vim.tbl_filter(function(id) return vim.startswith(id, lead) end, run().run_ids())
  end,
  desc = 'Show the trace of a run (default: the latest one) in a foldable buffer',
})

vim.api.nvim_create_user_command('PromptForgeDebug', function(cmd)
  require('promptforge.dap').debug(0, cmd.args)
end, { nargs = '*', desc = 'Debug this prompt with nvim-dap (the rest of the line is its argument string)' })

vim.api.nvim_create_user_command('PromptForgeFunctionBreakpoints', function(cmd)
  local pfdap = require('promptforge.dap')
  local dap = pfdap.need()
  if not dap then
    return
  end
  pfdap.set_function_breakpoints(dap, cmd.fargs)
  vim.notify('PromptForge: function breakpoints: '
    .. (#cmd.fargs > 0 and table.concat(cmd.fargs, ', ') or '(none)'), vim.log.levels.INFO)
end, {
  nargs = '*',
  complete = function(lead)
    return vim.tbl_filter(function(name) return vim.startswith(name, lead) end,
      require('promptforge.dap').FUNCTION_NAMES)
  end,
  desc = 'Stop debugged prompts at these suspending calls (tools.call, call, tool:ALIAS, ...); none: clear',
})

vim.api.nvim_create_user_command('PromptForgeTest', function(cmd)
  require('promptforge.test').run(cmd.fargs)
end, {
  nargs = '*',
  complete = 'file',
  desc = 'Run prompt tests (this test file, the prompt\'s, or the named paths) into the quickfix list and diagnostics',
})

vim.api.nvim_create_user_command('PromptForgeStop', function()
  run().stop()
end, { desc = 'Cancel the running prompt' })

vim.api.nvim_create_user_command('PromptForgeInstallBinary', function()
  require('promptforge.install').install()
end, { desc = 'Install the promptforge binary with cargo install from this checkout (in the background)' })

vim.api.nvim_create_user_command('PromptForgeInstallParser', function()
  local ok, result = require('promptforge.parser').install()
  if ok then
    vim.notify('PromptForge: parser installed at ' .. result)
    -- Highlight the prompts already open.
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.b[buf].promptforge_kind == 'prompt' then
        require('promptforge.parser').highlight(buf)
      end
    end
  else
    vim.notify('PromptForge: ' .. result, vim.log.levels.ERROR)
  end
end, { desc = 'Compile the tree-sitter parser from grammar/src' })

-- The lenses' commands run on the client side (see lua/promptforge/run.lua).
for name, fn in pairs(require('promptforge.run').commands) do
  vim.lsp.commands[name] = fn
end
