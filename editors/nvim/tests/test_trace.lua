-- The trace of a run (issue 27): :PromptForgeRunOffline runs a prompt whose
-- label's model is unreachable with every label answered by echo,
-- :PromptForgeTrace shows the run's spans with the round's request and reply
-- folded, <CR> on the round jumps to its prompt line, and the messages when no
-- run happened or the server keeps no trace.
local H = require('helpers')

H.setup()

-- The label's Host model would call a server that is not there (port 9).
local config = '[limits]\nlua_instructions = 100000000000\n'
  .. '[model.remote]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nretries = 0\n'
-- (Not `return models.infer(m)`: a tail call leaves no caller line to the round.)
local lua = table.concat({
  "log('asking')",
  "tools.add_local('grab', 'Grab things', {}, function() return 'x' end)",
  "tools.call('grab', { what = 'it' })",
  "local m = messages.new():system('Be brief.'):user('hi')",
  'local reply = models.infer(m)',
  'return reply',
}, '\n')

-- The notifications while `fn` runs, and until `until_` (a pattern) is among them.
local function notified(fn, until_)
  local seen = {}
  local notify = vim.notify
  vim.notify = function(text, level)
    table.insert(seen, { text = text, level = level })
  end
  local ok, err = pcall(fn)
  if ok and until_ then
    ok, err = pcall(H.wait, vim.inspect(until_) .. ' notified', function()
      for _, n in ipairs(seen) do
        if n.text:find(until_) then
          return true
        end
      end
    end)
  end
  vim.notify = notify
  if not ok then
    error(err, 0)
  end
  return seen
end

local function trace_buf()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.bo[buf].filetype == 'promptforge-trace' then
      return buf
    end
  end
end

local prompt, dir, offline_run

H.run('trace', {
  { ':PromptForgeTrace before any run says there is none', function()
    local seen = notified(function() vim.cmd('PromptForgeTrace') end)
    H.eq(1, #seen, 'notifications')
    H.eq('PromptForge: no run in this session yet: :PromptForgeRun or :PromptForgeRunOffline starts one', seen[1].text, 'the message')
    H.eq(nil, trace_buf(), 'a trace buffer')
  end },

  { ':PromptForgeRunOffline answers the unreachable label with echo', function()
    dir = H.scratch({
      ['p.md'] = H.prompt(lua, 'models:\n  w: { model: remote }\n'),
      ['promptforge.toml'] = config,
    })
    prompt = H.open(dir .. '/p.md')
    vim.cmd('PromptForgeRunOffline')
    local text = H.wait_output(prompt, 'Result:\nhi')
    assert(text:find('^Running .*p%.md offline'), text)
  end },

  { ':PromptForgeTrace opens the latest run\'s trace with the round and its request', function()
    vim.cmd('PromptForgeTrace')
    local buf = H.wait('the trace buffer', function()
      local b = trace_buf()
      return b and vim.api.nvim_get_current_buf() == b and vim.api.nvim_buf_line_count(b) > 1 and b
    end)
    local text = H.text(buf)
    offline_run = require('promptforge.run').lookup().run_id
    assert(text:find(('^Trace of %s %%(trace id run%%-%%x+%%): .*p%%.md %%(offline%%)'):format(vim.pesc(offline_run))), text)
    H.eq(false, vim.bo[buf].modifiable, 'modifiable')
    H.eq('expr', vim.wo.foldmethod, 'foldmethod')
    -- The tree: run, H1 pass, section Go, and the round under it, each with
    -- its prompt line.
    local run_row = H.line_of(buf, '^run  %d')
    local section_row = H.line_of(buf, ('^  section Go  .*  line %d$'):format(H.line_of(prompt, '^## Go') + 1))
    local round_row, round = H.line_of(buf, '^    chat w %(echo echo%)  ')
    assert(run_row < section_row and section_row < round_row, text)
    -- The section's log line, and its tool call with the arguments and output folded.
    H.eq(section_row + 1, H.line_of(buf, '^    log: asking$'), 'the log line\'s row')
    -- A script's tool call is on the line of its tools.call.
    local call_line = H.line_of(prompt, "^tools%.call%('grab'") + 1
    local call_row = H.line_of(buf, ('^    execute_tool grab  [%%d.]+ m?s  line %d$'):format(call_line))
    H.eq({ '      arguments', '        {', '          "what": "it"', '        }', '      output (trusted)', '        x' },
      vim.api.nvim_buf_get_lines(buf, call_row + 1, call_row + 7, false), 'the call\'s arguments and output')
    H.eq(call_row + 2, vim.fn.foldclosed(call_row + 2), 'the arguments\' fold')
    local infer_line = H.line_of(prompt, 'models%.infer') + 1
    assert(round:find(('  ≈%%d+ in, ≈%%d+ out tokens  line %d$'):format(infer_line)), round)
    -- The request (the engine's own: echo speaks no HTTP), folded, holding
    -- the messages.
    local request_row = H.line_of(buf, '^      request$')
    H.eq(round_row + 1, request_row, 'the request\'s row')
    H.eq(request_row + 1, vim.fn.foldclosed(request_row + 1), 'the request\'s fold')
    H.eq(-1, vim.fn.foldclosed(round_row + 1), 'the round\'s fold')
    local reply_row = H.line_of(buf, '^      reply$')
    local request = vim.api.nvim_buf_get_lines(buf, request_row + 1, reply_row, false)
    H.eq({
      '        {',
      '          "messages": [',
      '            {',
      '              "content": "Be brief.",',
      '              "role": "system"',
      '            },',
      '            {',
      '              "content": "hi",',
      '              "role": "user"',
      '            }',
      '          ],',
    }, vim.list_slice(request, 1, 11), 'the request\'s messages')
    -- The reply, folded too.
    H.eq(reply_row + 1, vim.fn.foldclosed(reply_row + 1), 'the reply\'s fold')
    H.eq({ '        {', '          "content": "hi",' }, vim.api.nvim_buf_get_lines(buf, reply_row + 1, reply_row + 3, false), 'the reply')
    -- za opens the request.
    vim.api.nvim_win_set_cursor(0, { request_row + 1, 0 })
    vim.cmd('normal! za')
    H.eq(-1, vim.fn.foldclosed(request_row + 1), 'the opened request')
  end },

  { '<CR> on the round jumps to its line in the prompt\'s window', function()
    local buf = trace_buf()
    local round_row = H.line_of(buf, '^    chat w ')
    vim.api.nvim_win_set_cursor(0, { round_row + 1, 0 })
    vim.cmd('normal ' .. vim.keycode('<CR>'))
    H.eq(prompt, vim.api.nvim_get_current_buf(), 'the buffer after <CR>')
    local infer = H.line_of(prompt, 'models%.infer')
    H.eq({ infer + 1, 0 }, vim.api.nvim_win_get_cursor(0), 'the cursor')
    -- A line of the request belongs to the round too; a section jumps to its heading.
    local trace_win = vim.fn.bufwinid(buf)
    vim.api.nvim_set_current_win(trace_win)
    vim.api.nvim_win_set_cursor(0, { H.line_of(buf, '"role": "system"') + 1, 0 })
    vim.cmd('normal ' .. vim.keycode('<CR>'))
    H.eq({ infer + 1, 0 }, vim.api.nvim_win_get_cursor(0), 'the cursor from the request')
    vim.api.nvim_set_current_win(trace_win)
    vim.api.nvim_win_set_cursor(0, { H.line_of(buf, '^  section Go') + 1, 0 })
    vim.cmd('normal ' .. vim.keycode('<CR>'))
    H.eq(prompt, vim.api.nvim_get_current_buf(), 'the buffer after <CR>')
    H.eq({ H.line_of(prompt, '^## Go') + 1, 0 }, vim.api.nvim_win_get_cursor(0), 'the cursor from the section')
    -- The tool call jumps to its tools.call line.
    local call_line = H.line_of(prompt, "^tools%.call%('grab'") + 1
    vim.api.nvim_set_current_win(trace_win)
    vim.api.nvim_win_set_cursor(0, { H.line_of(buf, '^    execute_tool grab') + 1, 0 })
    vim.api.nvim_win_set_cursor(vim.fn.bufwinid(prompt), { 1, 0 })
    vim.cmd('normal ' .. vim.keycode('<CR>'))
    H.eq({ call_line, 0 }, vim.api.nvim_win_get_cursor(0), 'the cursor from the tool call')
  end },

  { ':PromptForgeTrace RUNID of a run the server keeps no trace of gives its message', function()
    vim.api.nvim_set_current_buf(prompt)
    local seen = notified(function() vim.cmd('PromptForgeTrace run-99') end, 'no trace of run%-99')
    H.eq('PromptForge: no trace of run-99: the server keeps the traces of the last 20 prompt runs and failed test cases of this session',
      seen[#seen].text, 'the message')
  end },

  { 'a run that reaches the model shows the wire request and the round\'s error', function()
    vim.api.nvim_set_current_buf(prompt)
    vim.cmd('PromptForgeRun')
    H.wait_output(prompt, 'Failed: ')
    vim.cmd('PromptForgeTrace')
    local buf = trace_buf()
    H.wait('the trace of the second run', function()
      return not H.text(buf):find('(offline)', 1, true) and H.text(buf):find('chat w (openai m)', 1, true)
    end)
    local _, round = H.line_of(buf, '^    chat w %(openai m%)')
    assert(round:find('  error: model "remote" failed: connection refused', 1, true), round)
    -- The request as it went on the wire: the provider's body, with its address.
    local request_row = H.line_of(buf, '^      request to http://127%.0%.0%.1:9/v1/chat/completions$')
    local body = vim.api.nvim_buf_get_lines(buf, request_row + 1, -1, false)
    assert(vim.tbl_contains(body, '          "model": "m",'), table.concat(body, '\n'))
    assert(vim.tbl_contains(body, '          "stream": true,'), table.concat(body, '\n'))
    -- The offline run's trace, by its id.
    vim.cmd('PromptForgeTrace ' .. offline_run)
    H.wait('the offline run\'s trace again', function()
      return H.text(buf):find('^Trace of ' .. vim.pesc(offline_run) .. ' .*%(offline%)')
    end)
    H.line_of(buf, '^    chat w %(echo echo%)')
    -- Closed, then shown again in a new window: folded there too.
    vim.api.nvim_win_close(vim.fn.bufwinid(buf), false)
    vim.cmd('sbuffer ' .. buf)
    H.eq('expr', vim.wo.foldmethod, 'foldmethod of the new window')
    local request_row = H.line_of(buf, '^      request$')
    H.eq(request_row + 1, vim.fn.foldclosed(request_row + 1), 'the request\'s fold in the new window')
  end },
  { 'a failed test case names its trace, and :PromptForgeTrace opens it', function()
    local tdir = H.scratch({
      ['t.md'] = H.prompt("local m = messages.new():user(args)\nmodels.loop(m)\nreturn m[#m].content", 'models:\n  w: {}\n'),
      ['t.test.yaml'] = 'cases:\n  - name: fails on purpose\n    args: you\n    model:\n      - text: nope\n    expect:\n      result: something else\n',
    })
    local buf = H.open(tdir .. '/t.test.yaml')
    H.run_lens(buf, 0, 'Run all tests')
    local text = H.wait_output(buf, 'Result:\n0 passed, 1 failed')
    local id = text:match('\n    trace: :PromptForgeTrace (run%-%d+%.1)\n')
    assert(id, text)
    vim.cmd('PromptForgeTrace ' .. id)
    -- Its own trace buffer (one per prompt), of the prompt the case tests.
    local tbuf = H.wait('the case\'s trace', function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.bo[b].filetype == 'promptforge-trace' and H.text(b):find('^Trace of ' .. vim.pesc(id) .. ' %(trace id run%-%x+%): .*t%.md\n') then
          return b
        end
      end
    end)
    H.line_of(tbuf, '^    chat w %(script script%)')
  end },
})
