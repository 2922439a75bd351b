-- Debugging prompts with nvim-dap (https://github.com/mfussenegger/nvim-dap),
-- on the adapter the binary has (`promptforge dap`, the Debug Adapter
-- Protocol on stdin/stdout). nvim-dap is optional: without it the commands say
-- so and nothing else changes.
--
-- - register(): `dap.adapters.promptforge` (a function giving nvim-dap an
--   executable adapter: the language server's binary with `dap` for `lsp`,
--   and `--trust` when the prompt's promptforge.toml is trusted) and a
--   configuration provider that offers prompt buffers two launch
--   configurations in dap.continue();
-- - debug(): `:PromptForgeDebug [args]` and the `Debug` code lens
--   (`promptforge.debug`): require('dap').run() on the prompt's file;
-- - set_function_breakpoints(): `:PromptForgeFunctionBreakpoints`, the
--   adapter's function breakpoints, which nvim-dap has no command for.
local config = require('promptforge.config')
local trust = require('promptforge.trust')

local M = {}

M.URL = 'https://github.com/mfussenegger/nvim-dap'

-- The key of everything registered with nvim-dap (adapter, provider, listeners).
local KEY = 'promptforge'

-- The adapter table this plugin registered (to tell it from a user's own).
local registered = nil

-- True for an nvim-dap session on this adapter.
local function is_ours_session(session)
  return session ~= nil and session.config ~= nil and session.config.type == KEY
end

-- nvim-dap's module, or nil and why it cannot be loaded.
function M.nvim_dap()
  local ok, dap = pcall(require, 'dap')
  if ok and type(dap) == 'table' and type(dap.adapters) == 'table' and type(dap.run) == 'function' then
    return dap
  end
  local err = tostring(dap)
  if not ok and err:find("module 'dap' not found", 1, true) then
    return nil, 'nvim-dap (' .. M.URL .. ') is not installed'
  end
  -- Found, but it failed to load (or is something else named `dap`).
  return nil, 'nvim-dap (' .. M.URL .. ') failed to load: ' .. (ok and 'require("dap") is not nvim-dap' or err)
end

-- nvim-dap's module; else nil, after an error saying that nvim-dap is needed.
function M.need()
  local dap, why = M.nvim_dap()
  if not dap then
    vim.notify(('PromptForge: debugging needs nvim-dap: %s. Install it (%s) and try again.'):format(why, M.URL),
      vim.log.levels.ERROR)
  end
  return dap
end

-- The adapter's command: the language server's with `dap` for `lsp`
-- (config.subcommand), `--trust` last when `trusted` (the prompt's
-- promptforge.toml is trusted: it may start its Plugins' programs).
function M.adapter_cmd(trusted)
  return config.subcommand('dap', trusted)
end

-- The loaded buffer holding `path`, if any.
local function buffer_of(path)
  local want = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) ~= ''
      and vim.fs.normalize(vim.api.nvim_buf_get_name(buf)) == want then
      return buf
    end
  end
end

-- The adapter runs the prompt file on disk: a modified buffer of it is written
-- first (as VS Code saves before it starts debugging), so breakpoints and
-- frames are at the lines the editor shows.
local function save_program(path)
  local buf = buffer_of(path)
  if not (buf and vim.bo[buf].modified) then
    return
  end
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd('silent update')
  end)
  if not ok then
    vim.notify(('PromptForge: could not save %s before debugging (%s): the saved text runs'):format(
      vim.fn.fnamemodify(path, ':~:.'), err), vim.log.levels.WARN)
  end
end

-- A new adapter for nvim-dap: a function that nvim-dap calls with each
-- launch configuration once its variables and functions are resolved. It
-- checks `program`, asks vim.secure about the prompt's promptforge.toml (as
-- the language server's start does) and gives nvim-dap `promptforge dap`,
-- with `--trust` when that file is trusted; the adapter's enrich_config
-- writes the prompt's buffer when it has unsaved changes.
function M.adapter()
  return function(on_adapter, launch)
    if type(launch.program) ~= 'string' or launch.program == '' then
      vim.notify('PromptForge: the launch configuration names no `program` (the prompt file to debug)',
        vim.log.levels.ERROR)
      return
    end
    local cmd = M.adapter_cmd(trust.trusted_file(launch.program))
    on_adapter({
      type = 'executable',
      command = cmd[1],
      args = vim.list_slice(cmd, 2),
      enrich_config = function(resolved, on_config)
        save_program(resolved.program)
        on_config(resolved)
      end,
    })
  end
end

-- The launch configuration of the prompt at `path`. `args` is the argument
-- string (or nil), as `:PromptForgeRun` takes it.
function M.launch_config(path, args)
  return {
    type = 'promptforge',
    request = 'launch',
    name = 'PromptForge: ' .. vim.fn.fnamemodify(path, ':t'),
    program = vim.fn.fnamemodify(path, ':p'),
    args = (args ~= nil and args ~= '') and args or nil,
  }
end

-- The configurations dap.continue() offers a prompt buffer: debug it, and
-- debug it with an argument string asked with vim.ui.input (cancelling aborts).
function M.configurations(bufnr)
  if config.kind(bufnr) ~= 'prompt' then
    return {}
  end
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == '' then
    return {}
  end
  local plain = M.launch_config(path)
  plain.name = 'PromptForge: debug this prompt'
  local asking = M.launch_config(path)
  asking.name = 'PromptForge: debug this prompt with arguments…'
  -- A function returning a suspended coroutine: nvim-dap resumes it with its
  -- own, which waits for the answer (vim.ui.input may answer later).
  asking.args = function()
    return coroutine.create(function(dap_co)
      vim.ui.input({ prompt = 'Arguments: ' }, function(text)
        coroutine.resume(dap_co, text == nil and require('dap').ABORT or text)
      end)
    end)
  end
  return { plain, asking }
end

-- A line for the end of a debug run (its output is in nvim-dap's REPL).
local function on_exited(session, body)
  if not is_ours_session(session) then
    return
  end
  local code = body and body.exitCode or 0
  local name = vim.fn.fnamemodify(session.config.program or '?', ':t')
  vim.notify(('PromptForge: debugging %s ended, exit status %d (the output is in the REPL: :DapToggleRepl)'):format(
    name, code), code == 0 and vim.log.levels.INFO or vim.log.levels.WARN)
end

-- Function breakpoints: the suspending calls to stop at (`tools.call`,
-- `models.infer`, `models.loop`, `input.ask`, `call`, `fanout`, `jump`,
-- `tool:ALIAS`), which nvim-dap has no command for. Sent to each promptforge
-- session before its run starts, and to the running ones when they change.
-- The debugger's names (engine `FUNCTION_NAMES`): tests/tests/editor_vocabulary.rs
-- fails when this list drifts from them.
M.FUNCTION_NAMES = { 'tools.call', 'models.infer', 'models.loop', 'input.ask', 'call', 'fanout', 'jump', 'tool:' }
M.functions = {}

local function send_functions(session, names)
  local breakpoints = vim.tbl_map(function(name) return { name = name } end, names)
  session:request('setFunctionBreakpoints', { breakpoints = breakpoints }, function(err, body)
    if err then
      vim.notify('PromptForge: function breakpoints: ' .. tostring(err.message or err), vim.log.levels.ERROR)
      return
    end
    local refused = {}
    for i, answer in ipairs(body and body.breakpoints or {}) do
      if not answer.verified then
        table.insert(refused, ('%s: %s'):format(names[i], answer.message or 'refused'))
      end
    end
    if #refused > 0 then
      vim.notify('PromptForge: function breakpoints not set:\n' .. table.concat(refused, '\n'), vim.log.levels.WARN)
    end
  end)
end

-- The listeners of promptforge sessions (whichever adapter table runs them).
local function listen(dap)
  dap.listeners.after.event_exited[KEY] = on_exited
  -- Before nvim-dap's own handler, which sends the line breakpoints and then
  -- configurationDone: the run starts with the function breakpoints set.
  dap.listeners.before.event_initialized[KEY] = function(session)
    if is_ours_session(session) and #M.functions > 0 then
      send_functions(session, M.functions)
    end
  end
end

-- Replaces the function breakpoints (`:PromptForgeFunctionBreakpoints`) for
-- the sessions to come and the running ones.
function M.set_function_breakpoints(dap, names)
  M.functions = vim.deepcopy(names)
  listen(dap)
  for _, session in pairs(dap.sessions()) do
    if is_ours_session(session) and not session.closed then
      send_functions(session, M.functions)
    end
  end
end

-- Registers the adapter (replacing the one there: setup{ dap = true } owns it)
-- and the listeners.
local function register_adapter(dap)
  registered = M.adapter()
  dap.adapters[KEY] = registered
  listen(dap)
end

-- True when this nvim-dap lets plugins offer configurations (dap.providers).
function M.has_providers(dap)
  return type(dap.providers) == 'table' and type(dap.providers.configs) == 'table'
end

-- Registers the adapter, the listeners and the configuration provider.
function M.register(dap)
  register_adapter(dap)
  if M.has_providers(dap) then
    dap.providers.configs[KEY] = M.configurations
  end
end

-- Undoes register() (setup{ dap = false } after setup{ dap = true }); a user's
-- own adapter stays.
function M.unregister(dap)
  if registered and dap.adapters[KEY] == registered then
    dap.adapters[KEY] = nil
  end
  registered = nil
  if M.has_providers(dap) then
    dap.providers.configs[KEY] = nil
  end
  dap.listeners.after.event_exited[KEY] = nil
  dap.listeners.before.event_initialized[KEY] = nil
end

-- True when the adapter nvim-dap has under `promptforge` is this plugin's.
function M.is_ours(adapter)
  return adapter ~= nil and adapter == registered
end

local warned = false

-- setup(): registers with nvim-dap when `dap` is on, and says once when
-- nvim-dap is missing; with `dap` off it loads nothing (and undoes an earlier
-- setup{ dap = true }).
function M.setup(enabled)
  if not enabled then
    if registered and package.loaded.dap then
      M.unregister(package.loaded.dap)
    end
    return false
  end
  local dap, why = M.nvim_dap()
  if not dap then
    if not warned then
      warned = true
      vim.notify(('PromptForge: setup{ dap = true }: %s, so no debugger is registered for prompts. '
        .. 'Install nvim-dap (loaded before setup()), or leave dap = false.'):format(why), vim.log.levels.WARN)
    end
    return false
  end
  M.register(dap)
  return true
end

-- Debugs the prompt of `buf` (0: the current buffer; an output split stands
-- for its prompt) with nvim-dap: `:PromptForgeDebug [args]` and the Debug lens.
-- Registers the adapter first when nvim-dap has none named `promptforge` (but
-- not the configurations for dap.continue(): those are setup{ dap = true }'s).
-- Returns true when the session was asked to start.
function M.debug(buf, args)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  if vim.b[buf].promptforge_uri then
    buf = vim.uri_to_bufnr(vim.b[buf].promptforge_uri)
  end
  local dap = M.need()
  if not dap then
    return false
  end
  local path = vim.api.nvim_buf_get_name(buf)
  if config.kind(buf) ~= 'prompt' then
    vim.notify(('PromptForge: %s is not a prompt: only prompts can be debugged'):format(
      path == '' and 'this buffer' or vim.fn.fnamemodify(path, ':~:.')), vim.log.levels.ERROR)
    return false
  end
  if path == '' then
    vim.notify('PromptForge: write the prompt to a file first: the debugger runs the file', vim.log.levels.ERROR)
    return false
  end
  if dap.adapters[KEY] == nil then
    register_adapter(dap)
  end
  listen(dap)
  dap.run(M.launch_config(path, args), { filetype = vim.bo[buf].filetype })
  return true
end

return M
