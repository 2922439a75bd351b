-- :PromptForgeInstallBinary: `cargo install --locked --profile dist --path
-- server/cli` in this plugin's checkout, in the background (Neovim stays
-- usable; the last cargo line is echoed), then the prompts already open get
-- their server. Without a UI (`nvim --headless "+Lazy! sync" +qa`) it waits
-- for the build instead, so the binary is there when Neovim quits.
--
-- It is the lazy.nvim spec's `build` (README.md): lazy.nvim kills a shell
-- `build` after its git timeout (120 s by default), and a first optimised
-- build takes minutes.
local M = {}

-- The build under way, if any (a vim.SystemObj).
M.running = nil

local function notify(msg, level)
  vim.notify('PromptForge: ' .. msg, level or vim.log.levels.INFO)
end

-- The log of the last build: cargo's output, whole.
function M.log_file()
  return vim.fn.stdpath('log') .. '/promptforge-install.log'
end

-- Starts the build; `opts.wait` (default: true when Neovim has no UI) waits
-- for it. Returns true when it started (and, waiting, succeeded).
function M.install(opts)
  opts = opts or {}
  local config = require('promptforge.config')
  local wait = opts.wait
  if wait == nil then
    wait = #vim.api.nvim_list_uis() == 0
  end
  local root, not_root = config.checkout()
  if not root then
    notify(('cannot install the binary: %s is not a PromptForge repository (no server/cli/Cargo.toml); run %s '
      .. 'in a clone of it'):format(not_root, config.INSTALL), vim.log.levels.ERROR)
    return false
  end
  if vim.fn.executable('cargo') == 0 then
    notify('cannot install the binary: cargo is not on PATH; install Rust (1.90 or later) with rustup '
      .. '(https://rustup.rs), then run :PromptForgeInstallBinary again', vim.log.levels.ERROR)
    return false
  end
  if M.running then
    notify('the binary is being installed already (see ' .. M.log_file() .. ')', vim.log.levels.WARN)
    return false
  end

  local cmd = vim.split(config.INSTALL, ' ', { plain = true })
  local output = {}
  local last_echo = 0
  local function on_output(_, data)
    if not data then
      return
    end
    table.insert(output, data)
    local line = vim.trim(data:match('([^\n]*)\n?$') or '')
    local now = vim.uv.now()
    if not wait and line ~= '' and now - last_echo > 200 then
      last_echo = now
      vim.schedule(function()
        vim.api.nvim_echo({ { 'PromptForge: cargo: ' .. line } }, false, {})
      end)
    end
  end
  notify(('installing the binary: cd %s && %s (a few minutes the first time; cargo\'s output goes to %s)')
    :format(vim.fn.shellescape(root), config.INSTALL, M.log_file()))

  local finished = false
  local function finish(result)
    if finished then
      return
    end
    finished = true
    M.running = nil
    local text = table.concat(output)
    vim.fn.mkdir(vim.fs.dirname(M.log_file()), 'p')
    vim.fn.writefile(vim.split(text, '\n', { plain = true }), M.log_file())
    if result.code ~= 0 then
      local lines = vim.split(vim.trim(text), '\n', { plain = true })
      notify(('installing the binary failed (cargo exited %s); the end of its output (all of it in %s):\n%s')
        :format(result.signal ~= 0 and ('on signal ' .. result.signal) or tostring(result.code), M.log_file(),
          table.concat(vim.list_slice(lines, math.max(1, #lines - 15)), '\n')), vim.log.levels.ERROR)
      return
    end
    local found = config.locate()
    if not found.path then
      notify(('cargo installed the binary, but it is not where the plugin looks (%s): is cargo\'s install root '
        .. 'changed (install.root in a cargo config, CARGO_INSTALL_ROOT)? Set cmd in setup() to its path')
        :format(config.cargo_bin_dir()), vim.log.levels.WARN)
      return
    end
    notify(('installed the binary: %s (%s)'):format(found.path, found.why))
    -- The prompts opened without a server get one now.
    if config.setup_called then
      for _, buf in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(buf) then
          require('promptforge').attach(buf)
        end
      end
    end
  end

  local ok, system = pcall(vim.system, cmd, { cwd = root, stdout = on_output, stderr = on_output, text = true },
    function(result)
      if not wait then
        vim.schedule(function() finish(result) end)
      end
    end)
  if not ok then
    notify('cannot start cargo: ' .. tostring(system), vim.log.levels.ERROR)
    return false
  end
  M.running = system
  if wait then
    local result = system:wait()
    finish(result)
    return result.code == 0
  end
  return true
end

return M
