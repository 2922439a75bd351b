-- The plugin's options, which buffers are PromptForge documents, and the client
-- configuration shared by `setup()` (vim.lsp.start) and `lsp/promptforge.lua`
-- (Neovim 0.11's vim.lsp.config / vim.lsp.enable).
local M = {}

M.defaults = {
  -- The server command. When its first word is the bare name `promptforge`
  -- the binary is looked up (see M.locate): on PATH, then in this checkout's
  -- target/release and target/dist, then in $CARGO_HOME/bin (~/.cargo/bin).
  -- Any other first word (a path, another name) is used as it is.
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
  -- The address of the PromptForge book (its root, e.g. a local
  -- `docs/book/` as a file:// URL, or where your team publishes it): sent as
  -- `initializationOptions.bookUrl`, so each diagnostic links to its entry in
  -- the diagnostics reference. nil: no links.
  book_url = nil,
}

M.options = vim.deepcopy(M.defaults)

-- The plugin's folder (editors/nvim): three levels above this file, symbolic
-- links resolved (a package linked into pack/*/start/ is still the
-- repository's folder, whose checkout and grammar are found from it).
function M.plugin_dir()
  local here = vim.fs.normalize(debug.getinfo(1, 'S').source:sub(2))
  here = vim.uv.fs_realpath(here) or here
  return vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fs.normalize(here))))
end

function M.grammar_dir()
  return M.options.grammar_dir or vim.fs.normalize(M.plugin_dir() .. '/../../grammar')
end

-- 'prompt', 'test' or nil. A Markdown buffer is a prompt when it is named
-- `*.pf.md`, or its frontmatter may have a top-level `promptforge:` key
-- (detect.lua: a generous early check; the server makes the final decision and
-- stays silent on other Markdown). `*.test.yaml` files are prompt tests.
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
  return require('promptforge.detect').buffer_is_prompt(buf) and 'prompt' or nil
end

-- The server command as configured (before the binary is looked up), and
-- where it was set: vim.lsp.config's (Neovim 0.11+, without setup()) when it
-- is a list (lsp/promptforge.lua's own is a function that looks the binary
-- up when the server starts), else setup()'s or the default.
function M.configured_cmd()
  local lsp_config = vim.fn.has('nvim-0.11') == 1 and not M.setup_called and vim.lsp.config.promptforge
  if lsp_config and type(lsp_config.cmd) == 'table' then
    return lsp_config.cmd, "vim.lsp.config('promptforge', { cmd = ... })"
  end
  if M.setup_called and not vim.deep_equal(M.options.cmd, M.defaults.cmd) then
    return M.options.cmd, 'setup({ cmd = ... })'
  end
  return M.options.cmd, 'the default cmd'
end

M.BIN = 'promptforge'
-- What installs the binary, run in the repository (the README's line).
M.INSTALL = 'cargo install --locked --profile dist --path server/cli'

local function exe(name)
  return vim.fn.has('win32') == 1 and (name .. '.exe') or name
end

-- The repository this plugin folder belongs to (it is <repo>/editors/nvim),
-- or nil and the folder that is not one (the plugin was copied elsewhere).
function M.checkout()
  local root = vim.fs.normalize(M.plugin_dir() .. '/../..')
  if vim.uv.fs_stat(root .. '/server/cli/Cargo.toml') then
    return root
  end
  return nil, root
end

-- Where `cargo install` puts binaries: $CARGO_INSTALL_ROOT/bin when set,
-- else $CARGO_HOME/bin, else ~/.cargo/bin (an install.root in a cargo config
-- file is not read).
function M.cargo_bin_dir()
  for _, var in ipairs({ 'CARGO_INSTALL_ROOT', 'CARGO_HOME' }) do
    local dir = vim.env[var]
    if dir and dir ~= '' then
      return vim.fs.normalize(dir) .. '/bin', ('$%s/bin'):format(var)
    end
  end
  return vim.fs.normalize('~/.cargo/bin'), '~/.cargo/bin'
end

-- The places the bare name `promptforge` is looked up, in order: each
-- { path = string|nil, source = 'PATH'|'checkout'|'cargo', why = string }.
function M.candidates()
  local list = {}
  local on_path = vim.fn.exepath(M.BIN)
  table.insert(list, { path = on_path ~= '' and on_path or nil, source = 'PATH', where = 'PATH',
    why = 'found on PATH' })
  local root, not_root = M.checkout()
  if root then
    for _, profile in ipairs({ 'release', 'dist' }) do
      local path = ('%s/target/%s/%s'):format(root, profile, exe(M.BIN))
      table.insert(list, { path = path, source = 'checkout', where = path,
        why = ("found in this plugin's checkout, target/%s"):format(profile) })
    end
  else
    table.insert(list, { source = 'checkout', where = not_root .. '/target/{release,dist}',
      why = ('no checkout: %s is not a PromptForge repository (no server/cli/Cargo.toml)'):format(not_root) })
  end
  local dir, named = M.cargo_bin_dir()
  local path = dir .. '/' .. exe(M.BIN)
  table.insert(list, { path = path, source = 'cargo', where = path,
    why = ('found in %s, where cargo install puts it'):format(named) })
  return list
end

-- Which binary serves `cmd` (default: the configured one) and why:
-- { cmd = the command to run, path = the executable or nil, source =
-- 'setting'|'PATH'|'checkout'|'cargo'|nil, why = string, tried = the
-- candidates looked at (each with `found`) }. A first word other than the bare
-- `promptforge` is the user's setting and wins, found or not.
function M.locate(cmd, set_by)
  if cmd == nil then
    cmd, set_by = M.configured_cmd()
  end
  local found = { cmd = cmd, tried = {} }
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' then
    found.source = 'setting'
    found.why = ('%s is not a list of strings (not checked)'):format(set_by or 'cmd')
    return found
  end
  if cmd[1] ~= M.BIN then
    local path = vim.fn.exepath(cmd[1])
    found.source = 'setting'
    found.path = path ~= '' and path or nil
    found.why = ('set explicitly: %s'):format(set_by or 'cmd')
    return found
  end
  for _, candidate in ipairs(M.candidates()) do
    candidate.found = candidate.path ~= nil and vim.fn.executable(candidate.path) == 1
    table.insert(found.tried, candidate)
    if candidate.found then
      found.path, found.source, found.why = candidate.path, candidate.source, candidate.why
      found.cmd = vim.list_extend({ candidate.path }, cmd, 2)
      return found
    end
  end
  found.why = 'not found on PATH, in the checkout or in the cargo bin folder'
  return found
end

-- The server command to run: the configured one with its binary looked up.
function M.server_cmd()
  return M.locate().cmd
end

-- The command of another subcommand of the server's binary (`dap`, `test`):
-- the server command with `name` for `lsp` (its global flags such as
-- --config kept, `--stdio` dropped); {binary, name} when the command has no
-- `lsp`. `--trust` last when `trusted` (the project's promptforge.toml is
-- trusted: it may start its Plugins' programs).
function M.subcommand(name, trusted)
  local cmd = M.server_cmd()
  local out
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' then
    out = { M.BIN, name }
  else
    local replaced = false
    out = { cmd[1] }
    for i = 2, #cmd do
      if cmd[i] == 'lsp' and not replaced then
        table.insert(out, name)
        replaced = true
      elseif cmd[i] ~= '--stdio' then
        table.insert(out, cmd[i])
      end
    end
    if not replaced then
      out = { cmd[1], name }
    end
  end
  if trusted and not vim.tbl_contains(out, '--trust') then
    table.insert(out, '--trust')
  end
  return out
end

-- How to install the binary, as lines for :checkhealth and notifications.
function M.install_advice()
  local root = M.checkout()
  local cargo_dir = M.cargo_bin_dir()
  local lines = {}
  if root then
    table.insert(lines, (':PromptForgeInstallBinary runs it in the background, or in a shell: cd %s && %s (it goes '
      .. 'to %s, which the plugin looks in even when it is not on PATH)'):format(vim.fn.shellescape(root), M.INSTALL,
      cargo_dir))
  else
    table.insert(lines, ('Install it with cargo from a clone of the PromptForge repository: run %s in the clone '
      .. '(it goes to %s)'):format(M.INSTALL, cargo_dir))
  end
  table.insert(lines, "With lazy.nvim: give the plugin's spec build = ':PromptForgeInstallBinary' "
    .. '(editors/nvim/README.md has the spec), then run :Lazy build promptforge')
  if vim.fn.executable('cargo') == 0 then
    table.insert(lines, 'cargo is not on PATH: install Rust (1.90 or later) with rustup first: https://rustup.rs')
  end
  table.insert(lines, "Or name a binary you have: setup({ cmd = { '/path/to/promptforge', 'lsp' } })")
  return lines
end

-- Says once per session that the binary is missing (instead of the client's
-- spawn error on every buffer); true when it is there (or not checkable).
M.told_missing = false
function M.check_binary()
  local found = M.locate()
  if found.path or type(found.cmd) ~= 'table' then
    M.told_missing = false -- a binary that goes away later is told about again
    return true
  end
  if not M.told_missing then
    M.told_missing = true
    local what = found.source == 'setting'
        and ('the server command `%s` (%s) is not executable'):format(found.cmd[1], found.why)
        or ('the `promptforge` binary was not found (looked on PATH, in %s)'):format(table.concat(
          vim.tbl_map(function(c) return c.where end, vim.list_slice(found.tried, 2)), ', '))
    vim.notify(('PromptForge: %s; no server started. :PromptForgeInstallBinary installs it with cargo; '
      .. ':checkhealth promptforge says more.'):format(what),
      vim.log.levels.ERROR)
  end
  return false
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
    cmd = M.locate(opts.cmd).cmd,
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
