-- `input.ask` in a run reaches Neovim as promptforge/ask and is answered with
-- vim.ui.input: an asynchronous answer, then a cancel (answered null).
local H = require('helpers')

H.setup()
local dir = H.scratch({ ['ask.md'] = H.prompt("return 'answer: ' .. input.ask('Your name?')") })

H.run('ask', {
  { 'an answer given later through vim.ui.input reaches the run', function()
    local buf = H.open(dir .. '/ask.md')
    local asked
    vim.ui.input = function(opts, on_confirm)
      asked = opts.prompt
      vim.defer_fn(function() on_confirm('Ada') end, 50) -- as a floating-window input would
    end
    vim.cmd('PromptForgeRun')
    local text = H.wait_output(buf, 'Result:\nanswer: Ada')
    H.eq('Your name? ', asked, 'the prompt vim.ui.input got')
    -- The question and the answer are logged (the server's request may come
    -- before the run's first events, which go through a queue).
    assert(text:find('  ? Your name?\n', 1, true) and text:find('  > Ada\n', 1, true), text)
  end },

  { 'a cancelled input answers null and the run fails as input.ask does without an answer', function()
    local buf = vim.fn.bufnr(dir .. '/ask.md')
    vim.ui.input = function(_, on_confirm) on_confirm(nil) end
    vim.cmd('PromptForgeRun')
    local text = H.wait_output(buf, "\nFailed: Input")
    assert(text:find("no operator is available to answer input.ask", 1, true), text)
    assert(text:find('  > (no answer)', 1, true), text)
    assert(not text:find('Result:', 1, true), text)
  end },

  { 'an answer given after the run was stopped is sent, and the server stays up', function()
    local buf = vim.fn.bufnr(dir .. '/ask.md')
    local later
    vim.ui.input = function(_, on_confirm) later = on_confirm end
    vim.cmd('PromptForgeRun')
    H.wait('the question', function() return later end)
    vim.cmd('PromptForgeStop')
    H.wait_output(buf, '\nFailed: Cancelled')
    later('too late') -- tower-lsp 0.20 died of such a late answer; the server detaches its requests
    local client = vim.lsp.get_clients({ bufnr = buf, name = 'promptforge' })[1]
    local answers = vim.lsp.buf_request_sync(buf, 'textDocument/codeLens',
      { textDocument = { uri = vim.uri_from_bufnr(buf) } }, 5000)
    assert(answers and answers[client.id] and answers[client.id].result, 'the server is gone (see lsp.log)')
  end },
})
