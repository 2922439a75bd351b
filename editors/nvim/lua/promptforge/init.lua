-- PromptForge for Neovim 0.10+: starts `promptforge lsp` for prompt files and
-- prompt tests, runs prompts into a scratch split, shows code lenses and
-- progress, highlights prompts with the tree-sitter grammar, and (with
-- nvim-dap) debugs them on `promptforge dap`.
local config = require('promptforge.config')

local M = {}

local group = vim.api.nvim_create_augroup('promptforge', { clear = true })

-- Starts (or reuses) the client for `buf` when it is a PromptForge document.
function M.attach(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  if vim.bo[buf].buftype ~= '' or not vim.tbl_contains(config.options.filetypes, vim.bo[buf].filetype) then
    return
  end
  local kind = config.kind(buf)
  if not kind then
    return
  end
  vim.b[buf].promptforge_kind = kind
  if not config.check_binary() then
    return -- said once; :checkhealth promptforge says how to install it
  end
  local client_config = config.client_config()
  client_config.root_dir = config.root(buf)
  -- Once the trust of the buffer's promptforge.toml is decided (vim.secure
  -- may ask), which the server is told (a server told otherwise leaves the
  -- buffer), vim.lsp.start reuses the client of the same name, root_dir and
  -- trust, or starts one.
  require('promptforge.trust').then_start(buf, client_config.root_dir, function()
    vim.lsp.start(client_config, { bufnr = buf, reuse_client = client_config.reuse_client })
  end)
end

-- What every attached buffer gets, whichever way the client was started.
function M.on_attach(client, buf)
  vim.b[buf].promptforge_kind = config.kind(buf) or vim.b[buf].promptforge_kind
  if config.options.treesitter and vim.b[buf].promptforge_kind == 'prompt' then
    require('promptforge.parser').highlight(buf)
  end
  -- Code lenses: fetched now and after each edit or save.
  if client.server_capabilities.codeLensProvider then
    vim.lsp.codelens.refresh({ bufnr = buf })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'TextChanged', 'BufWritePost' }, {
      group = group,
      buffer = buf,
      callback = function()
        vim.lsp.codelens.refresh({ bufnr = buf })
      end,
    })
  end
end

-- $/progress of runs, shown in the echo area. (It reads the notification
-- itself: vim.lsp.status() would consume the messages a statusline shows.)
local titles = {} -- progress token -> its title
local function show_progress(args)
  local client = vim.lsp.get_client_by_id(args.data.client_id)
  if not client or client.name ~= 'promptforge' or not config.options.progress then
    return
  end
  local token, value = args.data.params.token, args.data.params.value or {}
  if value.kind == 'begin' then
    titles[token] = value.title
  end
  local text = ('PromptForge: %s%s'):format(titles[token] or '', value.message and (': ' .. value.message) or '')
  if value.kind == 'end' then
    titles[token] = nil
  end
  M.progress_message = text
  vim.api.nvim_echo({ { text } }, false, {})
end

function M.setup(opts)
  config.options = vim.tbl_deep_extend('force', vim.deepcopy(config.defaults), opts or {})
  config.setup_called = true
  -- The commands, when a plugin manager put this folder on 'runtimepath'
  -- after startup (as a lazy.nvim spec's `config` does for this subfolder of
  -- the repository) and so never sourced plugin/.
  if not vim.g.loaded_promptforge then
    vim.cmd.source(vim.fn.fnameescape(config.plugin_dir() .. '/plugin/promptforge.lua'))
  end
  vim.api.nvim_clear_autocmds({ group = group })
  -- FileType covers opening; BufWritePost/InsertLeave catch a buffer that
  -- became a prompt while it was edited.
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.options.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufWritePost', 'InsertLeave' }, {
    group = group,
    callback = function(args)
      if not vim.b[args.buf].promptforge_kind then
        M.attach(args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspProgress', { group = group, callback = show_progress })
  require('promptforge.parser').register()
  require('promptforge.dap').setup(config.options.dap)
  -- Buffers opened before setup().
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

return M
