-- The configuration of Neovim 0.11's vim.lsp.config, in nvim-lspconfig's form:
--   vim.lsp.enable('promptforge')
-- starts `promptforge lsp` for prompts and *.test.yaml files without setup();
-- override fields with vim.lsp.config('promptforge', { cmd = {...} }).
local config = require('promptforge.config')

local client_config = config.client_config(config.defaults)
client_config.name = nil -- vim.lsp.config names it after this file

-- The binary is looked up when a server starts (PATH, this checkout's
-- target/release and target/dist, the cargo bin folder: config.locate), so a
-- binary installed after startup is found. vim.lsp.config('promptforge',
-- { cmd = { ... } }) replaces this with the command given.
client_config.cmd = function(dispatchers, cfg)
  return vim.lsp.rpc.start(config.locate(config.defaults.cmd).cmd, dispatchers, {
    cwd = cfg and cfg.cmd_cwd,
    env = cfg and cfg.cmd_env,
    detached = cfg and cfg.detached,
  })
end

-- Only PromptForge documents get a root, so only they start the server (one
-- server per root and trust, reused by the buffers below it). The trust of the
-- buffer's promptforge.toml is decided here (vim.secure may ask), before the
-- server starts.
client_config.root_dir = function(bufnr, on_dir)
  local kind = config.kind(bufnr)
  if kind then
    vim.b[bufnr].promptforge_kind = kind
    if not config.check_binary() then
      return -- said once; :checkhealth promptforge says how to install it
    end
    local root = config.root(bufnr, config.defaults.root_markers)
    require('promptforge.trust').then_start(bufnr, root, function()
      on_dir(root)
    end)
  end
end

return client_config
