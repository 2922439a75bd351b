-- Debugging prompts with nvim-dap on `promptforge dap`.
--
-- First without nvim-dap (always): setup{ dap = true } says once that it is
-- missing and the plugin works on; :PromptForgeDebug, the Debug lens and
-- :PromptForgeFunctionBreakpoints refuse with a clear error; :checkhealth says
-- it is missing.
--
-- Then with the real nvim-dap when $PF_NVIM_DAP names a checkout of it (put on
-- 'runtimepath' here), else those cases are skipped: the adapter and the
-- configurations registered, a breakpoint set through nvim-dap stopping the
-- session the Debug lens started (its line, its thread, Locals and the Run
-- scope's `var`), a step over, continue to the end with the run's output;
-- :PromptForgeDebug with arguments, a condition and a logpoint, unsaved edits
-- written first; a function breakpoint; dap.continue()'s configuration that
-- asks for arguments.
local H = require('helpers')

-- Every notification, as { msg, level } (kept from the screen: in a headless
-- Neovim an error message inside vim.cmd() would raise).
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local function notes_matching(text)
  return vim.tbl_filter(function(n) return n.msg:find(text, 1, true) ~= nil end, notes)
end

-- The prompts: straight-line code (break at `local y`, step to `log`), a loop
-- (a condition on the loop's body, a logpoint after it), and a call of a
-- helper section (a function breakpoint on `call`).
local dir = H.scratch({
  ['p.md'] = H.prompt(table.concat({
    'local x = 41',
    'var.n = x + 1',
    'local y = var.n * 2',
    "log('y is ' .. y)",
    "return 'done ' .. args",
  }, '\n')),
  ['loop.md'] = H.prompt(table.concat({
    'local total = 0',
    'for i = 1, 5 do',
    '  total = total + i',
    'end',
    "log('total ' .. total)",
    "return 'sum ' .. total .. ' ' .. args",
  }, '\n')),
  ['calls.md'] = '---\nname: calls\ndescription: d\npromptforge: 0\n---\n\n# Calls\n\n## Go\n\n```lua\n'
    .. "local r = call('### Helper', 'x')\nreturn 'got ' .. r\n```\n\n### Helper\n\n---\n\n```lua\n"
    .. "return args .. '!'\n```\n",
  ['notes.md'] = '# Notes\n\nNo frontmatter here.\n',
})

-- :checkhealth promptforge's text (its buffer is closed again).
local function health_text()
  local back = vim.api.nvim_get_current_buf()
  vim.cmd('checkhealth promptforge')
  local report = vim.api.nvim_get_current_buf()
  local text = H.wait('the health report', function()
    local t = H.text(report)
    return t:find('PromptForge debugger', 1, true) and t
  end)
  vim.api.nvim_buf_delete(report, { force = true })
  if vim.api.nvim_buf_is_valid(back) then
    vim.api.nvim_set_current_buf(back)
  end
  return text
end

local MISSING = 'nvim-dap (https://github.com/mfussenegger/nvim-dap) is not installed'

-- nvim-dap, put on 'runtimepath' by the first case that needs it (nil: skip).
local dap_dir = vim.env.PF_NVIM_DAP ~= '' and vim.env.PF_NVIM_DAP or nil
local dap

-- What the sessions tell nvim-dap, recorded by listeners (reset by need_dap).
local events

-- nvim-dap for a case (skipped without PF_NVIM_DAP): on 'runtimepath', with no
-- session left by an earlier case, no breakpoint, and the events reset.
local function need_dap()
  if not dap_dir then
    H.skip('PF_NVIM_DAP not set')
  end
  if not dap then
    assert(vim.uv.fs_stat(dap_dir .. '/lua/dap.lua'), 'PF_NVIM_DAP=' .. dap_dir .. ' holds no lua/dap.lua')
    vim.opt.runtimepath:prepend(dap_dir)
    dap = require('dap')
    dap.listeners.after.event_output['test'] = function(_, body) table.insert(events.output, body) end
    dap.listeners.after.event_exited['test'] = function(_, body) table.insert(events.exited, body.exitCode) end
    dap.listeners.after.event_terminated['test'] = function() events.terminated = events.terminated + 1 end
    dap.listeners.after.event_stopped['test'] = function(_, body) table.insert(events.stopped, body.reason) end
  end
  if dap.session() then
    dap.terminate()
    H.wait('the end of a session an earlier case left', function() return dap.session() == nil end)
  end
  dap.clear_breakpoints()
  events = { output = {}, exited = {}, terminated = 0, stopped = {} }
  return dap
end

local function output(category)
  local text = {}
  for _, body in ipairs(events.output) do
    if body.category == category then
      table.insert(text, body.output)
    end
  end
  return table.concat(text)
end

-- Waits until the session is paused on `line` of the prompt, and returns it.
local function wait_stopped(line)
  return H.wait('the session paused at line ' .. line, function()
    local s = dap.session()
    return s and s.stopped_thread_id and s.current_frame and s.current_frame.line == line and s
  end)
end

-- Sends a request in the session and waits for its answer.
local function request(session, command, arguments)
  local done, err, result = false, nil, nil
  session:request(command, arguments, function(e, r) done, err, result = true, e, r end)
  H.wait('the answer to ' .. command, function() return done end)
  assert(not err, command .. ': ' .. vim.inspect(err))
  return result
end

-- The variables of the scope `name` of the session's current frame, name -> value.
local function scope(session, name)
  local scopes = request(session, 'scopes', { frameId = session.current_frame.id }).scopes
  for _, s in ipairs(scopes) do
    if s.name == name then
      local values = {}
      for _, v in ipairs(request(session, 'variables', { variablesReference = s.variablesReference }).variables) do
        values[v.name] = v.value
      end
      return values
    end
  end
  error('no scope ' .. name .. ' in ' .. vim.inspect(scopes))
end

-- Waits for the end of the case's session: terminated, no session left.
local function wait_ended()
  H.wait('the end of the session', function()
    return events.terminated == 1 and dap.session() == nil
  end)
end

-- Puts the cursor on the line of `buf` matching `pattern`; its 1-based number.
local function cursor_on(buf, pattern)
  vim.api.nvim_set_current_buf(buf)
  local row = H.line_of(buf, pattern)
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
  return row + 1
end

H.run('dap', {
  -- Without nvim-dap.

  { 'without nvim-dap, setup{ dap = true } says so once and the plugin works on', function()
    assert(not pcall(require, 'dap'), 'nvim-dap is already loadable: these cases need it absent')
    H.setup({ dap = true })
    H.setup({ dap = true })
    local said = notes_matching('setup{ dap = true }')
    H.eq(1, #said, 'notifications about setup{ dap = true }')
    H.eq(vim.log.levels.WARN, said[1].level, 'its level')
    assert(said[1].msg:find(MISSING, 1, true) and said[1].msg:find('no debugger is registered', 1, true), said[1].msg)
    -- Nothing broke: the server attaches and runs the prompt.
    local buf = H.open(dir .. '/p.md')
    vim.cmd('PromptForgeRun')
    H.wait_output(buf, 'Result:\ndone ')
  end },

  { ':PromptForgeDebug, the Debug lens and :PromptForgeFunctionBreakpoints refuse clearly without nvim-dap', function()
    local buf = vim.fn.bufnr(dir .. '/p.md')
    vim.api.nvim_set_current_buf(buf)
    local before = #notes
    vim.cmd('PromptForgeDebug some arguments')
    local said = notes[before + 1]
    assert(said, 'no notification')
    H.eq(vim.log.levels.ERROR, said.level, 'level')
    H.eq('PromptForge: debugging needs nvim-dap: ' .. MISSING
      .. '. Install it (https://github.com/mfussenegger/nvim-dap) and try again.', said.msg, 'message')
    -- The Debug lens on the H1 line says the same.
    H.run_lens(buf, H.line_of(buf, '^# T'), 'Debug')
    H.eq(before + 2, #notes, 'notifications')
    H.eq(said, notes[before + 2], 'the lens notification')
    vim.cmd('PromptForgeFunctionBreakpoints call')
    H.eq(said, notes[before + 3], 'the notification of :PromptForgeFunctionBreakpoints')
  end },

  { "the adapter's command is the server's with dap for lsp, its flags kept, --trust when trusted", function()
    local options = require('promptforge.config').options
    local cmd = options.cmd
    local pfdap = require('promptforge.dap')
    H.eq({ H.bin, 'dap' }, pfdap.adapter_cmd(false), 'from setup()')
    H.eq({ H.bin, 'dap', '--trust' }, pfdap.adapter_cmd(true), 'from setup(), trusted')
    options.cmd = { H.bin, '--config', 'x.toml', 'lsp', '--stdio' }
    local flags = pfdap.adapter_cmd(true)
    options.cmd = { H.bin, '--trust', 'lsp' }
    local given = pfdap.adapter_cmd(true)
    options.cmd = { '/opt/wrapper' }
    local wrapper = pfdap.adapter_cmd(false)
    options.cmd = cmd
    H.eq({ H.bin, '--config', 'x.toml', 'dap', '--trust' }, flags, 'with flags')
    H.eq({ H.bin, '--trust', 'dap' }, given, 'a --trust of the server command, not twice')
    H.eq({ '/opt/wrapper', 'dap' }, wrapper, 'without lsp')
  end },

  { ':checkhealth promptforge says nvim-dap is missing', function()
    local text = health_text()
    assert(text:find('WARNING nvim-dap not found: ' .. MISSING
      .. '; setup{ dap = true } registered no debugger', 1, true), text)
    assert(not text:find('ERROR', 1, true), text)
  end },

  -- With nvim-dap.

  { 'setup{ dap = true } registers the adapter on the server binary and configurations for prompts only', function()
    need_dap()
    H.setup({ dap = true })
    local provider = dap.providers.configs.promptforge
    local buf = vim.fn.bufnr(dir .. '/p.md')
    local configs = provider(buf)
    -- The adapter: a function giving the server binary's `dap`, with --trust
    -- (the scratch folder's promptforge.toml is trusted).
    local adapter
    assert(require('promptforge.dap').is_ours(dap.adapters.promptforge), 'the adapter is the plugin\'s')
    dap.adapters.promptforge(function(a) adapter = a end, configs[1])
    H.eq({ 'executable', H.bin, { 'dap', '--trust' } }, { adapter.type, adapter.command, adapter.args }, 'the adapter')
    H.eq({ 'PromptForge: debug this prompt', 'PromptForge: debug this prompt with arguments…' },
      vim.tbl_map(function(c) return c.name end, configs), 'configuration names')
    H.eq({ 'promptforge', 'launch', vim.fs.normalize(dir .. '/p.md') },
      { configs[1].type, configs[1].request, vim.fs.normalize(configs[1].program) }, 'the first configuration')
    vim.cmd.edit(dir .. '/notes.md')
    H.eq({}, provider(vim.api.nvim_get_current_buf()), 'configurations of plain Markdown')
    vim.api.nvim_set_current_buf(buf)
    local text = health_text()
    assert(text:find('OK nvim-dap found at ' .. vim.fs.normalize(dap_dir), 1, true), text)
    assert(text:find('OK nvim-dap adapter `promptforge` registered: ' .. H.bin .. ' dap', 1, true), text)
    assert(text:find('OK dap.continue() offers prompts two launch configurations', 1, true), text)
    assert(not text:find('ERROR', 1, true), text)
  end },

  { 'the Debug lens: a breakpoint stops it, Locals and var are read, a step, continue ends with the output', function()
    need_dap()
    local buf = vim.fn.bufnr(dir .. '/p.md')
    local line = cursor_on(buf, '^local y = ')
    dap.toggle_breakpoint()
    H.run_lens(buf, H.line_of(buf, '^# T'), 'Debug')
    local session = wait_stopped(line)
    H.eq('promptforge', session.config.type, 'the session type')
    local thread = session.threads[session.stopped_thread_id]
    H.eq({ 'walk: ## Go', true }, { thread.name, thread.stopped }, 'the stopped thread')
    H.eq(vim.fs.normalize(dir .. '/p.md'), vim.fs.normalize(session.current_frame.source.path), 'the frame source')
    H.eq('41', scope(session, 'Locals').x, 'the local x')
    H.eq('{n = 42}', scope(session, 'Run').var, 'var in the Run scope')
    H.eq('84', request(session, 'evaluate', { expression = 'var.n * 2', frameId = session.current_frame.id,
      context = 'watch' }).result, 'an evaluated expression')
    -- A step over lands on the next line, with y set.
    dap.step_over()
    wait_stopped(line + 1)
    H.eq('84', scope(session, 'Locals').y, 'the local y after the step')
    dap.continue()
    wait_ended()
    H.eq('y is 84\ndone \n', output('stdout'), 'the run log and result')
    H.eq({ 0 }, events.exited, 'exit codes')
    H.wait('the end notification', function()
      return #notes_matching('PromptForge: debugging p.md ended, exit status 0') == 1
    end)
  end },

  { ':PromptForgeDebug args: a condition and a logpoint through nvim-dap; unsaved edits are written first', function()
    need_dap()
    local buf = H.open(dir .. '/loop.md')
    -- An edit not saved yet: the debugger runs the file, so it is written first.
    local ret = H.line_of(buf, '^return ')
    vim.api.nvim_buf_set_lines(buf, ret, ret + 1, false, { "return 'total is ' .. total .. ' ' .. args" })
    assert(vim.bo[buf].modified)
    local body = cursor_on(buf, '^  total = total %+ i')
    dap.set_breakpoint('i == 3')
    cursor_on(buf, "^log%('total")
    dap.set_breakpoint(nil, nil, 'logged {total}')
    vim.cmd('PromptForgeDebug hello world')
    local session = wait_stopped(body)
    H.eq(false, vim.bo[buf].modified, 'the buffer was written')
    local locals = scope(session, 'Locals')
    H.eq({ '3', '3' }, { locals.i, locals.total }, 'i and total at the conditional stop')
    dap.continue()
    wait_ended()
    H.eq('logged 15\n', output('console'), 'the logpoint')
    H.eq('total 15\ntotal is 15 hello world\n', output('stdout'), 'the run log and result')
    H.eq({ 0 }, events.exited, 'exit codes')
  end },

  { ':PromptForgeFunctionBreakpoints stops at a suspending call; a wrong name is reported', function()
    need_dap()
    local buf = H.open(dir .. '/calls.md')
    local before = #notes
    vim.cmd('PromptForgeFunctionBreakpoints call nope')
    H.eq('PromptForge: function breakpoints: call, nope', notes[before + 1].msg, 'the command says')
    vim.cmd('PromptForgeDebug')
    local session = wait_stopped(H.line_of(buf, "^local r = call") + 1)
    H.eq({ 'function breakpoint' }, events.stopped, 'stop reasons')
    local refused = H.wait('the refused name', function()
      return notes_matching('PromptForge: function breakpoints not set:\nnope: ')[1]
    end)
    H.eq(vim.log.levels.WARN, refused.level, 'its level')
    H.eq('walk: ## Go', session.threads[session.stopped_thread_id].name, 'the stopped thread')
    vim.cmd('PromptForgeFunctionBreakpoints')
    dap.continue()
    wait_ended()
    H.eq('got x!\n', output('stdout'), 'the result')
    H.eq({ 'function breakpoint' }, events.stopped, 'stop reasons')
  end },

  { "dap.continue() offers the configurations; the one with arguments asks with vim.ui.input", function()
    need_dap()
    local buf = vim.fn.bufnr(dir .. '/p.md')
    vim.api.nvim_set_current_buf(buf)
    local select, input = vim.ui.select, vim.ui.input
    local offered, answer = nil, 'from input'
    vim.ui.select = function(items, opts, on_choice)
      offered = vim.tbl_map(opts.format_item, items)
      for _, item in ipairs(items) do
        if opts.format_item(item) == 'PromptForge: debug this prompt with arguments…' then
          return on_choice(item)
        end
      end
      on_choice(nil)
    end
    vim.ui.input = function(_, on_confirm) vim.schedule(function() on_confirm(answer) end) end
    local ok, err = pcall(function()
      dap.continue()
      wait_ended()
      H.eq({ 'PromptForge: debug this prompt', 'PromptForge: debug this prompt with arguments…' }, offered, 'offered')
      H.eq('y is 84\ndone from input\n', output('stdout'), 'the run log and result')
      -- Cancelling the input aborts: no session starts.
      answer = nil
      local before = #notes
      dap.continue()
      H.wait('the aborted run', function() return #notes_matching('Run aborted') > 0 end)
      H.eq(nil, dap.session(), 'the session')
      H.eq(1, events.terminated, 'sessions that ended')
      assert(#notes > before)
    end)
    vim.ui.select, vim.ui.input = select, input
    if not ok then
      error(err, 0)
    end
  end },

  -- (The adapter accepts the `launch`, then refuses the run: the refusal is
  -- its stderr output, and its exit status is 2.)
  { 'a prompt of a denied promptforge.toml: the adapter runs without --trust and refuses the run', function()
    need_dap()
    local denied = H.scratch({ ['m.md'] = H.prompt("return 'm'", 'plugins:\n  - acme/marker\n') }, { trust = false })
    vim.fn.writefile({ '[plugin."acme/marker"]', 'command = "sh"', ('args = ["-c", "touch %s/started"]'):format(denied) },
      denied .. '/promptforge.toml')
    H.trust(denied .. '/promptforge.toml', 'deny')
    H.open(denied .. '/m.md')
    vim.cmd('PromptForgeDebug')
    wait_ended()
    H.eq({ 2 }, events.exited, 'exit codes')
    assert(output('stderr'):find('plugin."acme/marker".command would start a program, and this configuration is not '
      .. 'trusted', 1, true), output('stderr'))
    H.eq({}, events.stopped, 'stops')
    H.wait('the end notification', function()
      return #notes_matching('PromptForge: debugging m.md ended, exit status 2') == 1
    end)
    H.eq(nil, vim.uv.fs_stat(denied .. '/started'), "the Plugin's program (it would have left a file)")
  end },
})
