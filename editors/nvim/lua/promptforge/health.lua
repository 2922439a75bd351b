-- :checkhealth promptforge
local M = {}

function M.check()
  local health = vim.health
  health.start('PromptForge')

  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.10 or later is needed')
  end

  M.check_binary()

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

  M.check_trust(clients)
  M.check_dap()
end

-- The server binary: which one serves (and from where, why), its version; when
-- none is found, where it was looked for and how to install it.
function M.check_binary()
  local health = vim.health
  local config = require('promptforge.config')
  local found = config.locate()
  if type(found.cmd) ~= 'table' or type(found.cmd[1]) ~= 'string' then
    health.info('server command: ' .. found.why)
    return
  end
  if not found.path then
    if found.source == 'setting' then
      health.error(('server command `%s` not executable: %s'):format(found.cmd[1], found.why),
        vim.list_extend({ ("Fix `cmd`, or leave it out (or its first word the bare name `promptforge`) to look the "
          .. 'binary up: on PATH, in the checkout, in the cargo bin folder') }, config.install_advice()))
    else
      local looked = vim.tbl_map(function(c)
        return c.source == 'PATH' and 'on PATH' or c.path or c.why
      end, found.tried)
      health.error('server binary `promptforge` not found: looked ' .. table.concat(looked, ', '),
        config.install_advice())
    end
    return
  end
  local result = vim.system({ found.path, '--version' }, { text = true }):wait(10000)
  if result.code == 0 then
    health.ok(('server binary %s (%s): %s'):format(found.path, found.why, vim.trim(result.stdout)))
  else
    health.error(('`%s --version` failed (exit %s): %s'):format(found.path, tostring(result.code),
      vim.trim(result.stderr or '')), config.install_advice())
    return
  end
  local skipped = vim.tbl_filter(function(c) return not c.found end, found.tried)
  if #skipped > 0 then
    health.info('looked up before it, not there: ' .. table.concat(vim.tbl_map(function(c)
      return c.source == 'PATH' and 'on PATH' or (c.path or c.why)
    end, skipped), ', '))
  end
end

-- Trust: what each server was told, and what vim.secure answered this session.
function M.check_trust(clients)
  local health = vim.health
  local trust = require('promptforge.trust')
  health.start('PromptForge trust (promptforge.toml)')
  for _, client in ipairs(clients) do
    local told = trust.client_trust(client)
    local file = trust.root_decision(client.root_dir).file
    if told == true then
      health.ok(('server %d: trusted (%s allowed with :trust): its Plugins start, runs and debugging work')
        :format(client.id, file or 'its promptforge.toml'))
    elseif told == false then
      health.warn(('server %d: not trusted (%s not allowed in vim.secure): no Run lenses, runs and tests '
        .. 'refused, its Plugins not started'):format(client.id, file or 'its promptforge.toml'),
        { ('To trust it: :edit %s, read it, :trust, then :edit the prompt again'):format(file or 'promptforge.toml') })
    else
      health.info(('server %d: no trust sent (no promptforge.toml above its files): the server trusts what '
        .. '`promptforge trust DIR` recorded'):format(client.id))
    end
  end
  local files = vim.tbl_keys(trust.decisions)
  table.sort(files)
  if #files == 0 then
    health.info('no promptforge.toml asked about yet')
  end
  for _, file in ipairs(files) do
    health.info(('%s: %s'):format(file, trust.decisions[file] and 'trusted (vim.secure: allowed)'
      or 'not trusted (vim.secure: denied, or not answered yet)'))
  end
end

-- The debugger: nvim-dap, the `promptforge` adapter and the configurations.
function M.check_dap()
  local health = vim.health
  local options = require('promptforge.config').options
  local pfdap = require('promptforge.dap')
  health.start('PromptForge debugger (nvim-dap)')
  local dap, why = pfdap.nvim_dap()
  if not dap then
    local advice = { 'Install nvim-dap: ' .. pfdap.URL }
    if options.dap then
      health.warn(('nvim-dap not found: %s; setup{ dap = true } registered no debugger'):format(why), advice)
    else
      health.info(('nvim-dap not found: %s; debugging prompts (:PromptForgeDebug, the Debug lens) needs it'):format(why))
    end
    return
  end
  local where = vim.api.nvim_get_runtime_file('lua/dap.lua', false)[1]
  health.ok('nvim-dap found' .. (where and (' at ' .. vim.fs.dirname(vim.fs.dirname(where))) or ''))

  local adapter = dap.adapters.promptforge
  if adapter == nil then
    if options.dap then
      health.warn('nvim-dap has no `promptforge` adapter although setup{ dap = true } was called '
        .. '(was nvim-dap loaded after setup(), or the adapter removed?)',
        { 'Load nvim-dap before setup(); :PromptForgeDebug and the Debug lens register the adapter on first use' })
    else
      health.info('nvim-dap adapter `promptforge` not registered yet: setup{ dap = true } registers it '
        .. '(:PromptForgeDebug and the Debug lens register it on first use)')
    end
  elseif pfdap.is_ours(adapter) then
    local cmd = pfdap.adapter_cmd(false)
    local line = ('nvim-dap adapter `promptforge` registered: %s (with --trust when the prompt\'s '
      .. 'promptforge.toml is trusted)'):format(table.concat(cmd, ' '))
    if vim.fn.executable(cmd[1]) ~= 1 then
      health.error(line .. ' (the command is not executable)', require('promptforge.config').install_advice())
    else
      health.ok(line)
    end
  elseif type(adapter) == 'function' then
    health.ok('nvim-dap adapter `promptforge` registered (a function, not checked)')
  else
    local line = ('nvim-dap adapter `promptforge` registered (not by this plugin): %s %s'):format(
      tostring(adapter.command), table.concat(adapter.args or {}, ' '))
    if adapter.type == 'executable' and vim.fn.executable(adapter.command or '') ~= 1 then
      health.error(line .. ' (the command is not executable)', { 'Put promptforge on PATH or set `cmd` in setup()' })
    else
      health.ok(line)
    end
  end

  if options.dap then
    if pfdap.has_providers(dap) and dap.providers.configs.promptforge then
      health.ok('dap.continue() offers prompts two launch configurations')
    elseif not pfdap.has_providers(dap) then
      health.warn('this nvim-dap has no dap.providers: dap.continue() offers no configurations for prompts',
        { 'Update nvim-dap, or use :PromptForgeDebug' })
    end
  end
end

return M
