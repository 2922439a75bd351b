-- The configuration of Neovim 0.11's vim.lsp.config, in nvim-lspconfig's form:
--   vim.lsp.enable('promptforge')
-- starts `promptforge lsp` for prompts and *.test.yaml files without setup();
-- override fields with vim.lsp.config('promptforge', { cmd = {...} }).
local config = require('promptforge.config')

local client_config = config.client_config(config.defaults)
client_config.name = nil -- vim.lsp.config names it after this file

-- Only PromptForge documents get a root, so only they start the server (one
-- server per root and trust, reused by the buffers below it). The trust of the
-- buffer's promptforge.toml is decided here (vim.secure may ask), before the
-- server starts.
client_config.root_dir = function(bufnr, on_dir)
  local kind = config.kind(bufnr)
  if kind then
    vim.b[bufnr].promptforge_kind = kind
    local root = config.root(bufnr, config.defaults.root_markers)
    require('promptforge.trust').then_start(bufnr, root, function()
      on_dir(root)
    end)
  end
end

return client_config
