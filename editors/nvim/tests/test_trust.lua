-- Trust (host.md §1.1): before a server starts for a prompt, the plugin asks
-- Neovim's trust database (vim.secure.read) about the nearest promptforge.toml,
-- once: Neovim remembers the answer. Denied: the server is told
-- trusted = false, and serves diagnostics without Run lenses, refuses runs and
-- starts no Plugin of that file (nor does :PromptForgeTest's binary, run
-- without --trust). Allowed with :trust: trusted = true, the Run
-- lens and runs, and --trust for the debugger. No promptforge.toml: nothing
-- asked, `trusted` left out. :checkhealth says which is which.
local H = require('helpers')

-- vim.secure.read asks with vim.fn.confirm: each question is recorded and
-- answered with the choice `answer` names ('deny', 'view', ...).
local asked = {}
local answer = 'deny'
local confirm = vim.fn.confirm
vim.fn.confirm = function(msg, choices, default, ...)
  if type(choices) ~= 'string' or not tostring(msg):find('untrusted', 1, true) then
    return confirm(msg, choices, default, ...)
  end
  table.insert(asked, { msg = msg, choices = choices })
  local labels = vim.split(choices:gsub('&', ''), '\n', { plain = true })
  for i, label in ipairs(labels) do
    if label == answer then
      return i
    end
  end
  error(('no choice %q in %q'):format(answer, choices))
end

-- Every notification's text (kept from the screen).
local notes = {}
vim.notify = function(msg)
  table.insert(notes, msg)
end

H.setup()

-- A Plugin whose program would leave a file behind: it must not start while
-- its promptforge.toml is not trusted.
local function plugin_config(dir)
  return ('[plugin."acme/marker"]\ncommand = "sh"\nargs = ["-c", "touch %s/started"]\n'):format(dir)
end

local denied = H.scratch({
  ['p.md'] = H.prompt("return tools.call('nope')"),
  ['q.md'] = H.prompt("return 'q'"),
  ['q.test.yaml'] = 'cases:\n  - name: one\n    expect:\n      result: "q"\n',
}, { trust = false })
vim.fn.writefile(vim.split(plugin_config(denied), '\n', { plain = true }), denied .. '/promptforge.toml', 'b')
vim.fn.writefile(vim.split(H.prompt("return 'm'", 'plugins:\n  - acme/marker\n'), '\n', { plain = true }),
  denied .. '/marker.md', 'b')
local allowed = H.scratch({ ['p.md'] = H.prompt("return 'trusted run'") }, { trust = false })
local none = H.scratch({ ['p.md'] = H.prompt("return 'no config'") }, { config = false })

local function lens_titles(buf)
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })[1]
  local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeLens',
    { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 10000)
  local result = assert(answers and answers[client.id], 'no codeLens answer').result or {}
  return vim.tbl_map(function(lens) return lens.command and lens.command.title end, result)
end

local function diagnostics(buf, pattern)
  return vim.tbl_filter(function(d) return d.message:find(pattern) ~= nil end, vim.diagnostic.get(buf))
end

local first_client

H.run('trust', {
  { 'a denied promptforge.toml: asked once, the server is told trusted = false', function()
    answer = 'deny'
    local buf, client = H.open(denied .. '/p.md')
    H.eq(1, #asked, 'questions')
    assert(asked[1].msg:find(vim.uv.fs_realpath(denied .. '/promptforge.toml'), 1, true), asked[1].msg)
    H.eq({ trusted = false }, client.config.init_options, 'init_options')
    H.eq({ file = vim.fs.normalize(denied .. '/promptforge.toml'), trusted = false }, vim.b[buf].promptforge_trust,
      'the decision of the buffer')
    first_client = client
    -- A second prompt of the folder: Neovim remembered the answer.
    local _, again = H.open(denied .. '/q.md')
    H.eq(1, #asked, 'questions after the second prompt')
    H.eq(client.id, again.id, 'the second prompt shares the server')
  end },

  { 'untrusted, the real server shows the diagnostics, no Run lens, refuses a run, starts no Plugin', function()
    local buf = H.open(denied .. '/p.md')
    H.wait('the diagnostic of the unbound alias', function() return #diagnostics(buf, 'nope') > 0 end)
    H.eq({}, vim.tbl_filter(function(t) return t == 'Run' or t == 'Debug' or t == 'Run with arguments…' end,
      lens_titles(buf)), 'run lenses of an untrusted prompt')
    vim.cmd('PromptForgeRun')
    H.wait_output(buf, 'not trusted')
    local tests = H.open(denied .. '/q.test.yaml')
    H.eq({}, lens_titles(tests), 'lenses of a test file')
    -- :PromptForgeTest runs the binary without --trust: it refuses the Plugin's program.
    local from = #notes
    vim.cmd('PromptForgeTest')
    H.wait('the test run refused', function()
      for i = from + 1, #notes do
        if notes[i]:find('would start a program, and this configuration is not trusted', 1, true) then
          return true
        end
      end
    end)
    local marker = H.open(denied .. '/marker.md')
    local info = H.wait('the Information diagnostic on the Plugin', function()
      local found = diagnostics(marker, 'not trusted')
      return #found > 0 and found
    end)
    H.eq(1, #info, 'diagnostics saying not trusted')
    H.eq(vim.diagnostic.severity.INFO, info[1].severity, 'its severity')
    H.eq(H.line_of(marker, '^  %- acme/marker'), info[1].lnum, 'its line (the plugins: entry)')
    H.eq(nil, vim.uv.fs_stat(denied .. '/started'), "the Plugin's program (it would have left a file)")
  end },

  { 'allowed with :trust after viewing it: trusted = true on the next :edit, the Run lens and a run', function()
    answer = 'view' -- Neovim 0.12 offers ignore/view/deny; 0.10 and 0.11 also allow
    -- (Not H.open: `view` leaves the cursor in the promptforge.toml's split.)
    vim.cmd.edit(allowed .. '/p.md')
    local buf = vim.fn.bufnr(allowed .. '/p.md')
    local client = H.wait('the promptforge client on the prompt', function()
      local c = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })[1]
      return c and c.initialized and c
    end)
    H.eq(2, #asked, 'questions')
    if asked[2].choices:find('&allow', 1, true) then
      error('this Neovim offers allow: answer allow instead of view here')
    end
    H.eq({ trusted = false }, client.config.init_options, 'init_options before :trust')
    -- `view` opened the file in a split: the user reads it and trusts it.
    local config_win = vim.fn.bufwinid(vim.fn.bufnr(allowed .. '/promptforge.toml'))
    assert(config_win ~= -1, 'the promptforge.toml is shown')
    vim.api.nvim_set_current_win(config_win)
    vim.cmd('trust')
    vim.cmd('close')
    vim.api.nvim_set_current_buf(buf)
    vim.cmd('edit')
    local trusted = H.wait('a trusted server for the prompt', function()
      local c = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })
      return #c == 1 and c[1].initialized and c[1].id ~= client.id and c[1]
    end)
    H.eq(2, #asked, 'questions after :trust (Neovim knows the file now)')
    H.eq({ trusted = true }, trusted.config.init_options, 'init_options after :trust')
    H.wait('the untrusted server, left with no buffer, to stop', function()
      return vim.lsp.get_client_by_id(client.id) == nil
    end)
    local title = H.line_of(buf, '^# T')
    H.wait('the Run lens', function()
      return vim.tbl_contains(vim.tbl_map(function(l) return l.command.title end,
        vim.tbl_filter(function(l) return l.range.start.line == title end, vim.lsp.codelens.get(buf))), 'Run')
    end)
    vim.cmd('PromptForgeRun')
    H.wait_output(buf, 'Result:\ntrusted run')
  end },

  { 'no promptforge.toml: nothing asked, trusted left out', function()
    assert(require('promptforge.trust').config_file(none) == nil, 'a promptforge.toml above ' .. none)
    local buf, client = H.open(none .. '/p.md')
    H.eq(2, #asked, 'questions')
    H.eq(nil, client.config.init_options, 'init_options')
    H.eq({}, vim.b[buf].promptforge_trust, 'the decision of the buffer')
  end },

  { 'book_url goes to the server as initializationOptions.bookUrl', function()
    local config = require('promptforge.config')
    config.options.book_url = 'https://example.org/pf/'
    local params = {}
    require('promptforge.trust').before_init(params, { root_dir = none })
    config.options.book_url = nil
    H.eq({ bookUrl = 'https://example.org/pf/' }, params.initializationOptions, 'initializationOptions')
  end },

  { 'the debugger gets --trust for a prompt of a trusted promptforge.toml only', function()
    local pfdap = require('promptforge.dap')
    local function adapter_args(program)
      local resolved
      pfdap.adapter()(function(a) resolved = a end, { type = 'promptforge', request = 'launch', program = program })
      return assert(resolved, 'no adapter for ' .. program).args
    end
    H.eq({ 'dap', '--trust' }, adapter_args(allowed .. '/p.md'), 'allowed')
    H.eq({ 'dap' }, adapter_args(denied .. '/p.md'), 'denied')
    H.eq({ 'dap' }, adapter_args(none .. '/p.md'), 'no promptforge.toml')
    H.eq(2, #asked, 'questions')
  end },

  { ':checkhealth promptforge says what each server was told', function()
    vim.cmd('checkhealth promptforge')
    local text = H.wait('the health report', function()
      local t = H.text(0)
      return t:find('PromptForge trust', 1, true) and t
    end)
    local denied_file = vim.fs.normalize(denied .. '/promptforge.toml')
    local allowed_file = vim.fs.normalize(allowed .. '/promptforge.toml')
    assert(text:find(('WARNING server %d: not trusted (%s not allowed in vim.secure)'):format(first_client.id,
      denied_file), 1, true), text)
    assert(text:find(('server %%d+: trusted %%(%s allowed with :trust%%)'):format(vim.pesc(allowed_file))), text)
    assert(text:find('server %d+: no trust sent'), text)
    assert(text:find(denied_file .. ': not trusted', 1, true), text)
    assert(text:find(allowed_file .. ': trusted', 1, true), text)
    assert(not text:find('ERROR', 1, true), text)
  end },
})
