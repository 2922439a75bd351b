-- Running prompts and their tests (editor.md §2): `promptforge.run`,
-- `promptforge.test` and `promptforge.cancel` through workspace/executeCommand,
-- the `promptforge/runEvent` stream into one scratch split per prompt, and
-- `promptforge/ask` answered with vim.ui.input.
local M = {}

local runs = {} -- "client:runId" -> { out, uri, client, run_id, done, trace_id }
local early = {} -- "client:runId" -> events that came before the command's response
local outputs = {} -- document uri -> its output buffer
M.last = {} -- document uri -> key of its latest run
local latest -- key of the session's latest run

-- Neovim 0.11 made client methods take `self`; 0.10 has plain functions.
local method_call = vim.fn.has('nvim-0.11') == 1
local function request(client, method, params, handler, buf)
  if method_call then
    return client:request(method, params, handler, buf)
  end
  return client.request(method, params, handler, buf)
end
M.request = request

-- The promptforge client of `buf`, and the document `buf` stands for (an
-- output or trace buffer stands for its prompt).
local function target(buf)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local uri = vim.b[buf].promptforge_uri or vim.uri_from_bufnr(buf)
  local doc = vim.uri_to_bufnr(uri)
  local client = vim.lsp.get_clients({ bufnr = doc, name = 'promptforge' })[1]
  return client, uri, doc
end
M.target = target

-- The output buffer of a document, created on first use and shown in a split.
local function output_for(uri)
  local out = outputs[uri]
  if not (out and vim.api.nvim_buf_is_valid(out)) then
    out = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(out, 'promptforge://' .. vim.uri_to_fname(uri) .. '.output')
    vim.bo[out].bufhidden = 'hide'
    vim.bo[out].filetype = 'promptforge-output'
    vim.b[out].promptforge_uri = uri
    outputs[uri] = out
  end
  if vim.fn.bufwinid(out) == -1 then
    local back = vim.api.nvim_get_current_win()
    vim.cmd('botright 12split')
    vim.api.nvim_win_set_buf(0, out)
    vim.wo.wrap = true
    vim.api.nvim_set_current_win(back)
  end
  return out
end

local function write(out, lines, reset)
  vim.bo[out].modifiable = true
  if reset then
    vim.api.nvim_buf_set_lines(out, 0, -1, false, lines)
  else
    vim.api.nvim_buf_set_lines(out, -1, -1, false, lines)
  end
  vim.bo[out].modifiable = false
  local win = vim.fn.bufwinid(out)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(out), 0 })
  end
end

local function split(text)
  return vim.split(tostring(text), '\n', { plain = true })
end

-- The lines an event adds to the output.
local function render(e)
  local t = e.type
  if t == 'log' then
    return vim.tbl_map(function(l) return '  ' .. l end, split(e.text))
  elseif t == 'section' then
    return { '§ ' .. (e.heading == '' and '(title)' or e.heading) }
  elseif t == 'modelRound' then
    return { ('  model %s, round %d'):format(e.label, e.round) }
  elseif t == 'toolCall' then
    return { ('  → %s%s'):format(e.alias, e.path and (' (' .. e.path .. ')') or '') }
  elseif t == 'toolResult' then
    return { ('  ← %s %s in %d ms'):format(e.alias, e.ok and 'ok' or 'failed', e.durationMs) }
  elseif t == 'caseFinished' then
    local lines = { (e.ok and 'PASS ' or 'FAIL ') .. e.name }
    for _, failure in ipairs(e.failures or {}) do
      vim.list_extend(lines, vim.tbl_map(function(l) return '    ' .. l end, split(failure)))
    end
    if type(e.traceRunId) == 'string' then
      table.insert(lines, '    trace: :PromptForgeTrace ' .. e.traceRunId)
    end
    return lines
  elseif t == 'finished' then
    local lines = { '', 'Result:' }
    vim.list_extend(lines, e.result == vim.NIL and { '(no result)' } or split(e.result))
    table.insert(lines, ('(finished in %d ms)'):format(e.durationMs))
    return lines
  elseif t == 'failed' then
    local at = e.range and (' (line %d, column %d)'):format(e.range.start.line + 1, e.range.start.character + 1) or ''
    local lines = { '', ('Failed: %s%s'):format(e.kind, at) }
    return vim.list_extend(lines, split(e.message))
  end
  return { vim.inspect(e) }
end

local function on_event(key, event)
  local run = runs[key]
  if not run then
    early[key] = early[key] or {}
    table.insert(early[key], event)
    return
  end
  if vim.api.nvim_buf_is_valid(run.out) then
    write(run.out, render(event))
  end
  -- A failed case's trace is kept as a run of its own, on the prompt's lines.
  if event.type == 'caseFinished' and type(event.traceRunId) == 'string' and type(event.promptUri) == 'string' then
    runs[run.client.id .. ':' .. event.traceRunId] =
      { out = run.out, uri = event.promptUri, client = run.client, run_id = event.traceRunId, done = true }
  end
  if event.type == 'finished' or event.type == 'failed' then
    run.done = true
    run.trace_id = event.traceId ~= vim.NIL and event.traceId or nil
    if event.type == 'finished' then
      local result = event.result == vim.NIL and '(no result)' or split(event.result)[1]
      vim.notify('PromptForge: ' .. result, vim.log.levels.INFO)
    else
      vim.notify(('PromptForge: %s: %s'):format(event.kind, event.message), vim.log.levels.WARN)
    end
  end
end

-- Sends `command` with `argument` for `buf`'s document and streams the run.
function M.start(command, argument, buf)
  local client, uri = target(buf)
  if not client then
    vim.notify('PromptForge: no language server attached to this buffer', vim.log.levels.ERROR)
    return
  end
  argument = vim.tbl_extend('force', argument or {}, { uri = uri })
  local out = output_for(uri)
  local what = command == 'promptforge.test' and 'Testing ' or 'Running '
  local header = what .. vim.fn.fnamemodify(vim.uri_to_fname(uri), ':~:.')
  if argument.offline then
    header = header .. ' offline'
  end
  if argument.args then
    header = header .. ' with ' .. vim.inspect(argument.args)
  elseif argument.case then
    header = header .. ', case ' .. vim.inspect(argument.case)
  end
  write(out, { header }, true)
  local params = { command = command, arguments = { argument } }
  request(client, 'workspace/executeCommand', params, function(err, result)
    if err or type(result) ~= 'table' or not result.runId then
      write(out, { 'Error: ' .. (err and err.message or vim.inspect(result)) })
      return
    end
    local key = client.id .. ':' .. result.runId
    runs[key] = { out = out, uri = uri, client = client, run_id = result.runId, offline = argument.offline }
    M.last[uri] = key
    latest = key
    for _, event in ipairs(early[key] or {}) do
      on_event(key, event)
    end
    early[key] = nil
  end, vim.uri_to_bufnr(uri))
end

function M.run(args, buf)
  M.start('promptforge.run', { args = (args ~= nil and args ~= '') and args or nil }, buf)
end

-- Runs with every model label answered by `echo` (no model called, no key
-- needed); the run's trace then shows each request as it would have gone out.
function M.run_offline(args, buf)
  M.start('promptforge.run', { args = (args ~= nil and args ~= '') and args or nil, offline = true }, buf)
end

-- A run of this session: `run_id` as the command answered it (several
-- servers may each have one: the one of `buf`'s server first), or the
-- session's latest run when nil. Nil when there is none.
function M.lookup(run_id, buf)
  if run_id == nil then
    return latest and runs[latest]
  end
  local client = target(buf)
  local mine = client and runs[client.id .. ':' .. run_id]
  if mine then
    return mine
  end
  for _, run in pairs(runs) do
    if run.run_id == run_id then
      return run
    end
  end
end

-- The ids of the session's runs (for completion).
function M.run_ids()
  local ids = {}
  for _, run in pairs(runs) do
    ids[#ids + 1] = run.run_id
  end
  table.sort(ids)
  return ids
end

-- Cancels the document's latest run that is still going (else any that is).
function M.stop(buf)
  local _, uri = target(buf)
  local key = M.last[uri]
  if not (key and runs[key] and not runs[key].done) then
    key = nil
    for k, run in pairs(runs) do
      if not run.done then
        key = k
      end
    end
  end
  if not key then
    vim.notify('PromptForge: no run is going', vim.log.levels.INFO)
    return
  end
  local run = runs[key]
  local run_id = key:match('^%d+:(.*)$')
  request(run.client, 'workspace/executeCommand', { command = 'promptforge.cancel', arguments = { { runId = run_id } } }, function() end)
end

-- Asks `question` with vim.ui.input and waits for the answer (nil: cancelled).
-- Neovim calls server-request handlers inside a coroutine, so an asynchronous
-- vim.ui.input (dressing.nvim, snacks, a test stub) is waited for by yielding.
local function ask(question)
  local co = coroutine.running()
  local done, answer = false, nil
  vim.ui.input({ prompt = question .. ' ' }, function(text)
    done, answer = true, text
    if co and coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end)
  if not done then
    if co and coroutine.isyieldable() then
      coroutine.yield()
    else
      vim.wait(10 * 60 * 1000, function() return done end)
    end
  end
  return answer
end

-- The handlers the client is configured with.
M.handlers = {
  ['promptforge/runEvent'] = function(_, params, ctx)
    on_event(ctx.client_id .. ':' .. params.runId, params.event)
  end,
  ['promptforge/ask'] = function(_, params, ctx)
    local key = ctx.client_id .. ':' .. params.runId
    local run = runs[key]
    if run then
      write(run.out, { '  ? ' .. params.question })
    end
    local answer = ask(params.question)
    if run then
      write(run.out, { '  > ' .. (answer or '(no answer)') })
    end
    if answer == nil then
      return vim.NIL -- the operator cancelled: the response is null
    end
    return { answer = answer }
  end,
}

-- Client-side commands: the lenses' commands go through M.start so their runs
-- are shown; `promptforge.runWithArguments` asks for the argument string first;
-- `promptforge.debug` (the Debug lens) starts nvim-dap on the prompt.
M.commands = {
  ['promptforge.run'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    M.start('promptforge.run', { args = arg.args, seed = arg.seed }, vim.uri_to_bufnr(arg.uri or vim.uri_from_bufnr(ctx.bufnr)))
  end,
  ['promptforge.test'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    M.start('promptforge.test', { case = arg.case }, vim.uri_to_bufnr(arg.uri or vim.uri_from_bufnr(ctx.bufnr)))
  end,
  ['promptforge.runWithArguments'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    local buf = vim.uri_to_bufnr(arg.uri or vim.uri_from_bufnr(ctx.bufnr))
    vim.ui.input({ prompt = 'Arguments: ' }, function(text)
      if text ~= nil then
        M.start('promptforge.run', { args = text }, buf)
      end
    end)
  end,
  ['promptforge.debug'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    require('promptforge.dap').debug(vim.uri_to_bufnr(arg.uri or vim.uri_from_bufnr(ctx.bufnr)), arg.args)
  end,
}

return M
