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

vim.api.nvim_create_user_command('PromptForgeTest', function(cmd)
  run().test(cmd.args)
end, { nargs = '?', desc = "Run this prompt's tests (or one case by name)" })

vim.api.nvim_create_user_command('PromptForgeStop', function()
  run().stop()
end, { desc = 'Cancel the running prompt' })

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
