-- The trace of a run (`promptforge/trace`, editors.md "The trace of a run")
-- in a scratch buffer per prompt, `promptforge://<file>.trace`: the span tree
-- indented and foldable by span, each round's request and reply and each tool
-- call's arguments and output as folded blocks; <CR> on a line jumps to the
-- prompt line of its span (its parent's when it has none).
local run = require('promptforge.run')

local M = {}

local views = {} -- trace buffer -> { uri, lines, levels, spans, by_id, closed }
local traces = {} -- document uri -> its trace buffer

local function notify(text, level)
  vim.notify('PromptForge: ' .. text, level or vim.log.levels.INFO)
end

-- A JSON null arrives as vim.NIL in arrays and as nil in objects.
local function present(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

local is_list = vim.islist or vim.tbl_islist

-- `value` as indented JSON lines (object keys sorted: Lua tables keep no
-- order), each starting with `pad`; `head` goes before the value, `tail`
-- after it.
local function json_lines(value, pad, head, tail, out)
  if type(value) ~= 'table' then
    local text = value == vim.NIL and 'null' or vim.json.encode(value)
    table.insert(out, pad .. head .. text .. tail)
  elseif next(value) == nil then
    local empty = getmetatable(value) == vim._empty_dict_mt and '{}' or '[]'
    table.insert(out, pad .. head .. empty .. tail)
  elseif is_list(value) then
    table.insert(out, pad .. head .. '[')
    for i, item in ipairs(value) do
      json_lines(item, pad .. '  ', '', i < #value and ',' or '', out)
    end
    table.insert(out, pad .. ']' .. tail)
  else
    local keys = vim.tbl_keys(value)
    table.sort(keys)
    table.insert(out, pad .. head .. '{')
    for i, key in ipairs(keys) do
      json_lines(value[key], pad .. '  ', vim.json.encode(tostring(key)) .. ': ', i < #keys and ',' or '', out)
    end
    table.insert(out, pad .. '}' .. tail)
  end
  return out
end

-- The lines of a text block, each starting with `pad`.
local function text_lines(text, pad)
  return vim.tbl_map(function(line) return pad .. line end, vim.split(text, '\n', { plain = true }))
end

local function duration(span)
  local start, finish = present(span.startNanos), present(span.endNanos)
  if not (start and finish) then
    return 'unfinished'
  end
  local ms = (finish - start) / 1e6
  return ms < 1000 and ('%.1f ms'):format(ms) or ('%.2f s'):format(ms / 1000)
end

local function tokens(usage)
  usage = present(usage)
  if not usage then
    return nil
  end
  local mark = usage.estimated and '≈' or ''
  return ('%s%d in, %s%d out tokens'):format(mark, usage.inputTokens, mark, usage.outputTokens)
end

-- A span's name as trace viewers show it (the engine's Span::name).
local function name(kind)
  local t = kind.type
  if t == 'run' then
    return 'run'
  elseif t == 'section' then
    return kind.heading == '' and 'H1 pass' or ('section ' .. kind.heading)
  elseif t == 'chain' then
    return kind.kind
  elseif t == 'round' then
    return ('chat %s (%s %s)'):format(kind.label, kind.provider, kind.model)
  elseif t == 'toolCall' then
    return 'execute_tool ' .. kind.alias
  end
  return t
end

-- The one line of a span: name, duration, tokens of a round, its prompt line, error.
local function headline(span)
  local parts = { name(span.kind), duration(span) }
  if span.kind.type == 'round' then
    table.insert(parts, tokens(span.kind.usage))
  end
  if present(span.line) then
    table.insert(parts, 'line ' .. span.line)
  end
  if present(span.error) then
    table.insert(parts, 'error: ' .. span.error)
  end
  return table.concat(parts, '  ')
end

local function event_line(event)
  local kind = event.kind
  if kind.type == 'log' then
    return 'log: ' .. kind.line
  elseif kind.type == 'notice' then
    return 'notice: ' .. kind.text
  elseif kind.type == 'jump' then
    return 'jump to ' .. kind.target
  elseif kind.type == 'ask' then
    return ('ask: %s -> %s'):format(kind.question, present(kind.answer) or '(no answer)')
  end
  return kind.type
end

-- Renders `trace` into a view: lines, their fold levels ('>N' starts a fold),
-- the span of each line and the lines whose folds start closed.
local function render(trace, header)
  local view = { lines = {}, levels = {}, spans = {}, by_id = {}, closed = {} }
  local function add(text, level, span)
    local row = #view.lines + 1
    view.lines[row], view.levels[row], view.spans[row] = (text:gsub('\n', ' ')), level, span
  end
  -- A folded block: its title line, then `body` one level deeper.
  local function block(title, body, depth, span)
    add(title, '>' .. depth, span)
    table.insert(view.closed, #view.lines)
    for _, line in ipairs(body) do
      add(line, tostring(depth), span)
    end
  end
  for _, line in ipairs(header) do
    add(line, '0', nil)
  end
  local children = {}
  for _, span in ipairs(trace.spans or {}) do
    view.by_id[span.id] = span
    local parent = present(span.parent) or 0
    children[parent] = children[parent] or {}
    table.insert(children[parent], span)
  end
  local function walk(span, depth)
    local pad = string.rep('  ', depth)
    add(pad .. headline(span), '>' .. (depth + 1), span)
    local inner = pad .. '  '
    for _, event in ipairs(span.events or {}) do
      add(inner .. event_line(event), tostring(depth + 1), span)
    end
    local kind = span.kind
    if kind.type == 'run' and present(kind.result) then
      block(inner .. 'result', text_lines(kind.result, inner .. '  '), depth + 2, span)
    elseif kind.type == 'round' then
      local wire = present(kind.wire)
      local title = wire and (inner .. 'request to ' .. wire.url) or (inner .. 'request')
      block(title, json_lines(wire and wire.body or kind.request, inner .. '  ', '', '', {}), depth + 2, span)
      local reply = present(kind.reply)
      if reply then
        block(inner .. 'reply', json_lines(reply, inner .. '  ', '', '', {}), depth + 2, span)
      end
    elseif kind.type == 'toolCall' then
      local ok, arguments = pcall(vim.json.decode, kind.arguments)
      local body = ok and json_lines(arguments, inner .. '  ', '', '', {}) or text_lines(kind.arguments, inner .. '  ')
      block(inner .. 'arguments', body, depth + 2, span)
      if present(kind.output) then
        local trust = present(kind.trust)
        block(inner .. 'output' .. (trust and (' (' .. trust .. ')') or ''), text_lines(kind.output, inner .. '  '), depth + 2, span)
      end
    end
    for _, child in ipairs(children[span.id] or {}) do
      walk(child, depth + 1)
    end
  end
  for _, root in ipairs(children[0] or {}) do
    walk(root, 0)
  end
  return view
end

-- The fold level of line v:lnum of a trace buffer ('foldexpr').
function M.foldexpr()
  local view = views[vim.api.nvim_get_current_buf()]
  return view and view.levels[vim.v.lnum] or '0'
end

-- The trace buffer of a document, created on first use.
local function buffer_for(uri)
  local buf = traces[uri]
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, 'promptforge://' .. vim.uri_to_fname(uri) .. '.trace')
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'promptforge-trace'
    vim.b[buf].promptforge_uri = uri
    vim.keymap.set('n', '<CR>', M.jump, { buffer = buf, desc = 'Jump to the prompt line of this span' })
    traces[uri] = buf
  end
  return buf
end

-- Shows `trace` of the run of document `uri`, focused, in its own window.
local function show(trace, run_id, uri, offline)
  local total = { input = 0, output = 0, estimated = false, any = false }
  for _, span in ipairs(trace.spans or {}) do
    local usage = span.kind.type == 'round' and present(span.kind.usage)
    if usage then
      total.input, total.output = total.input + usage.inputTokens, total.output + usage.outputTokens
      total.estimated, total.any = total.estimated or usage.estimated, true
    end
  end
  local header = {
    ('Trace of %s (trace id %s): %s%s'):format(run_id, trace.runId, vim.fn.fnamemodify(vim.uri_to_fname(uri), ':~:.'),
      offline and ' (offline)' or ''),
  }
  if total.any then
    table.insert(header, 'Total: ' .. tokens({ inputTokens = total.input, outputTokens = total.output, estimated = total.estimated }))
  end
  if (present(trace.droppedSpans) or 0) > 0 then
    table.insert(header, ('%d spans left out: the trace reached [limits] trace_bytes'):format(trace.droppedSpans))
  end
  table.insert(header, '<CR>: jump to the prompt line; za: open or close a fold')
  table.insert(header, '')
  local view = render(trace, header)
  view.uri = uri
  local buf = buffer_for(uri)
  views[buf] = view
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, view.lines)
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright vsplit')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  vim.api.nvim_set_current_win(win)
  vim.wo[win].wrap = false
  vim.wo[win].foldmethod = 'expr'
  vim.wo[win].foldexpr = "v:lua.require'promptforge.trace'.foldexpr()"
  vim.wo[win].foldlevel = 99
  vim.cmd('normal! zx')
  for _, line in ipairs(view.closed) do
    vim.cmd(line .. 'foldclose')
  end
  vim.api.nvim_win_set_cursor(win, { math.min(#header + 1, #view.lines), 0 })
end

-- :PromptForgeTrace [runId]: asks the server for the trace of `run_id` (as
-- the run command answered it; default: the session's latest run) and shows it.
function M.open(run_id, buf)
  run_id = (run_id ~= nil and run_id ~= '') and run_id or nil
  local found = run.lookup(run_id, buf)
  local client, uri
  if found then
    client, uri, run_id = found.client, found.uri, found.run_id
    if not found.done then
      notify(run_id .. ' is still going: its trace is kept when it ends')
      return
    end
  elseif run_id then
    client, uri = run.target(buf) -- a run this session did not start here
    if not client then
      notify('no language server attached to this buffer to ask for ' .. run_id, vim.log.levels.ERROR)
      return
    end
  else
    notify('no run in this session yet: :PromptForgeRun or :PromptForgeRunOffline starts one', vim.log.levels.WARN)
    return
  end
  run.request(client, 'promptforge/trace', { runId = run_id }, function(err, trace)
    if err or type(trace) ~= 'table' then
      notify(err and err.message or ('no trace of ' .. run_id), vim.log.levels.WARN)
      return
    end
    show(trace, run_id, uri, found and found.offline)
  end, vim.uri_to_bufnr(uri))
end

-- <CR> in a trace: the prompt line of the span under the cursor (its
-- parent's when it has none), in the prompt's window.
function M.jump()
  local view = views[vim.api.nvim_get_current_buf()]
  local span = view and view.spans[vim.api.nvim_win_get_cursor(0)[1]]
  if not span then
    return
  end
  local line = present(span.line)
  while not line and present(span.parent) and view.by_id[span.parent] do
    span = view.by_id[span.parent]
    line = present(span.line)
  end
  if not line then
    notify('this span has no prompt line', vim.log.levels.WARN)
    return
  end
  local doc = vim.uri_to_bufnr(view.uri)
  vim.fn.bufload(doc)
  local win = vim.fn.bufwinid(doc)
  if win == -1 then
    -- The previous window when it shows a file, else a new split.
    local previous = vim.fn.win_getid(vim.fn.winnr('#'))
    if previous ~= 0 and previous ~= vim.api.nvim_get_current_win()
      and vim.bo[vim.api.nvim_win_get_buf(previous)].buftype == '' then
      win = previous
    else
      vim.cmd('aboveleft split')
      win = vim.api.nvim_get_current_win()
    end
    vim.api.nvim_win_set_buf(win, doc)
  end
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { math.min(line, vim.api.nvim_buf_line_count(doc)), 0 })
  vim.cmd('normal! zv')
end

return M
