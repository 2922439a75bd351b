-- Workspace trust (host.md §1.1): a project's promptforge.toml is code (it can
-- start the programs of MCP servers and hand them environment variables). Before
-- a server starts for a buffer, the plugin asks Neovim's own trust database
-- about the nearest promptforge.toml upward from the buffer's folder:
-- vim.secure.read() asks the user only about a file it has no answer for (or
-- whose content changed since) and remembers `deny` and `:trust`. The answer
-- goes to the server as `initializationOptions.trusted` (true: allowed, false:
-- not), absent when there is no promptforge.toml (the server then relies on
-- `promptforge trust DIR`), and to the debugger as `--trust`.
local M = {}

-- What was decided this session, for :checkhealth: file -> true/false.
M.decisions = {}

-- The decision each server root was last given (root_dir -> decision): read by
-- before_init and reuse_client, which see the root but not the buffer.
local by_root = {}

-- The nearest promptforge.toml upward from the folder `dir`, or nil.
function M.config_file(dir)
  if not dir or dir == '' then
    return nil
  end
  local found = vim.fs.find('promptforge.toml', { upward = true, path = dir, type = 'file' })[1]
  return found and vim.fs.normalize(found) or nil
end

-- The trust of the project configuration of the folder `dir`:
-- { file = path, trusted = true|false }, or {} when there is none. May ask the
-- user (vim.secure.read).
function M.decide(dir)
  local file = M.config_file(dir)
  if not file then
    return {}
  end
  local ok, contents = pcall(vim.secure.read, file)
  local trusted = ok and contents ~= nil
  M.decisions[file] = trusted
  return { file = file, trusted = trusted }
end

-- The folder of `buf`'s file (the current directory for a buffer without a name).
local function folder_of(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= '' and vim.fs.dirname(vim.fs.normalize(name)) or vim.fn.getcwd()
end

-- What a running client was told: true, false, or nil (absent).
function M.client_trust(client)
  local options = client.config and client.config.init_options
  if type(options) == 'table' then
    return options.trusted
  end
  return nil
end

local function is_stopped(client)
  if type(client.is_stopped) == 'function' then
    return client:is_stopped()
  end
  return false
end

-- Decides the trust of `buf`'s configuration (asking when Neovim has no
-- answer) before a server is started or reused for it at `root`: the root
-- remembers it for before_init and reuse_client, and a server that was told
-- otherwise (before a `:trust`, say) leaves the buffer, and stops when it is
-- left with no buffer (`:edit` may have detached the buffer already).
function M.prepare(buf, root)
  local decision = M.decide(folder_of(buf))
  vim.b[buf].promptforge_trust = decision
  by_root[root] = decision
  for _, client in ipairs(vim.lsp.get_clients({ name = 'promptforge' })) do
    local attached = client.attached_buffers and client.attached_buffers[buf]
    if (attached or client.root_dir == root) and M.client_trust(client) ~= decision.trusted then
      if attached then
        vim.lsp.buf_detach_client(buf, client.id)
      end
      if next(client.attached_buffers or {}) == nil then
        client:stop()
      end
    end
  end
  return decision
end

-- The decision the server root `root` was last given ({} when none).
function M.root_decision(root)
  return by_root[root] or {}
end

-- Calls `start()` once the trust of `buf`'s configuration is decided (see
-- prepare) for the server root `root`, on the next tick: the question of
-- vim.secure may open a window (`view`), which inside the FileType event of
-- an `:edit` would make Neovim send FileType again, and ask again. Several
-- calls for a buffer before that tick make one.
local waiting = {}
function M.then_start(buf, root, start)
  if waiting[buf] then
    return
  end
  waiting[buf] = true
  vim.schedule(function()
    waiting[buf] = nil
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_is_loaded(buf) then
      M.prepare(buf, root)
      start()
    end
  end)
end

-- The client's before_init: `initializationOptions.trusted` from its root's
-- decision (the key left out when there is none), kept in the client's
-- config for reuse_client and :checkhealth.
function M.before_init(params, config)
  local options = vim.deepcopy(params.initializationOptions or {})
  options.trusted = (by_root[config.root_dir] or {}).trusted
  options.bookUrl = require('promptforge.config').options.book_url
  if next(options) == nil then
    options = nil -- no initializationOptions at all ({} would be sent as [])
  end
  params.initializationOptions = options
  config.init_options = options
end

-- The client's reuse_client: a running server of the same root that was told
-- the same trust.
function M.reuse_client(client, config)
  return client.name == config.name
    and not is_stopped(client)
    and client.root_dir == config.root_dir
    and M.client_trust(client) == (by_root[config.root_dir] or {}).trusted
end

-- The trust of the configuration of a prompt file, for the debugger: true
-- when it is allowed (the adapter then runs with --trust).
function M.trusted_file(path)
  return M.decide(vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(path, ':p')))).trusted == true
end

return M
